package devsim

import (
	"fmt"
	"strings"
)

// renderVRP writes Huawei VRP (V5 and V8) current configurations.
func renderVRP(m *model, n int) doc {
	var b builder
	v8 := m.platform == "huawei_vrpv8"
	if v8 {
		b.l("!Software Version V800R021C10SPC600")
		b.vol(func(v volatile) string {
			return "!Last configuration was updated at " + v.ChangedAt.UTC().Format("2006-01-02 15:04:05+00:00") + " by " + m.user
		})
		b.vol(func(v volatile) string {
			return "!Last configuration was saved at " + v.ChangedAt.UTC().Format("2006-01-02 15:04:05+00:00")
		})
	} else {
		b.l("!Software Version V200R019C10SPC500")
	}
	b.l("#")
	b.f(" sysname %s", m.host)
	b.l("#")
	var vlans []string
	for i := 0; i < n; i += 8 {
		vlans = append(vlans, fmt.Sprint(m.unit(i).VLAN))
	}
	for len(vlans) > 0 {
		k := min(10, len(vlans))
		b.f("vlan batch %s", strings.Join(vlans[:k], " "))
		vlans = vlans[k:]
	}
	b.l("#", " stp enable", "#", " ntp-service server disable", " ntp-service unicast-server 192.0.2.123", "#")
	b.l("aaa", " authentication-scheme default", " authorization-scheme default", " domain default")
	b.f(" local-user %s password irreversible-cipher $1c$%s$", m.user, m.secret("user", 56, base64Alphabet[:62]))
	b.f(" local-user %s privilege level 15", m.user)
	b.f(" local-user %s service-type terminal ssh", m.user)
	b.f(" local-user backup password irreversible-cipher $1c$%s$", m.secret("backup", 56, base64Alphabet[:62]))
	b.l(" local-user backup privilege level 3", "#")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("interface Vlanif%d", u.VLAN)
		b.f(" ip address %s 255.255.255.0", ip(u.Net, 1))
		b.l("#")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface GigabitEthernet%d/0/%d", u.Slot-1, u.Port)
		b.f(" description %s", u.Desc)
		if u.Shut {
			b.l(" shutdown")
		}
		b.l(" port link-type access")
		b.f(" port default vlan %d", u.VLAN)
		b.l("#")
	}
	b.l("interface NULL0", "#")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route-static %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("#", "acl number 3000")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f(" rule %d permit tcp source %s 0.0.0.255 destination %s 0 destination-port eq %d", (i+1)*5, ip(u.Net, 0), u.Remote, u.Service)
	}
	b.l("#")
	b.f("snmp-agent community read cipher %%^%%#%s%%^%%#", m.secret("snmp", 40, base64Alphabet[:62]))
	b.l("snmp-agent sys-info version v2c v3", "#", "stelnet server enable", "#")
	b.l("user-interface con 0", " authentication-mode aaa", "user-interface vty 0 4", " authentication-mode aaa", " protocol inbound ssh", "#", "return")
	return b.d
}

// renderComware writes HPE / H3C Comware 7 current configurations.
func renderComware(m *model, n int) doc {
	var b builder
	b.l("#", " version 7.1.070, Release 6635P07", "#")
	b.f(" sysname %s", m.host)
	b.l("#", " clock timezone UTC add 00:00:00", "#", " ntp-service enable", " ntp-service unicast-server 192.0.2.123", "#")
	b.l(" lldp global enable", "#", " password-recovery enable", "#")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f(" name VLAN%d", u.VLAN)
		b.l("#")
	}
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("interface Vlan-interface%d", u.VLAN)
		b.f(" ip address %s 255.255.255.0", ip(u.Net, 1))
		b.l("#")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface GigabitEthernet%d/0/%d", u.Slot, u.Port)
		b.l(" port link-mode bridge")
		b.f(" description %s", u.Desc)
		if u.Shut {
			b.l(" shutdown")
		}
		b.f(" port access vlan %d", u.VLAN)
		b.l("#")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f(" ip route-static %s 24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("#")
	b.f(" snmp-agent community read cipher $c$3$%s==", m.secret("snmp", 40, base64Alphabet))
	b.l(" snmp-agent sys-info version v2c v3", "#", " ssh server enable", "#")
	b.l("acl advanced 3000")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f(" rule %d permit tcp source %s 0.0.0.255 destination %s 0 destination-port eq %d", i*5, ip(u.Net, 0), u.Remote, u.Service)
	}
	b.l("#", "line vty 0 63", " authentication-mode scheme", " user-role network-operator", "#")
	b.f("local-user %s class manage", m.user)
	b.f(" password hash $h$6$%s$%s==", m.secret("user:salt", 16, base64Alphabet), m.secret("user", 86, base64Alphabet))
	b.l(" service-type ssh terminal", " authorization-attribute user-role network-admin", "#", "return")
	return b.d
}

// renderJunos writes `show configuration | display omit`.
func renderJunos(m *model, n int) doc {
	var b builder
	b.vol(func(v volatile) string {
		return "## Last commit: " + v.ChangedAt.UTC().Format("2006-01-02 15:04:05 MST") + " by " + m.user
	})
	b.l("version 22.4R3-S2.11;", "system {")
	b.f("    host-name %s;", m.host)
	b.l("    root-authentication {")
	b.f("        encrypted-password \"%s\"; ## SECRET-DATA", m.sha512Crypt("root"))
	b.l("    }", "    login {")
	// The login user and a "backup" one: once when they are the same
	// (Junos merges a user given twice into one, so a configuration
	// showing it twice could never be loaded back as shown).
	users := []string{m.user}
	if m.user != "backup" {
		users = append(users, "backup")
	}
	for _, user := range users {
		b.f("        user %s {", user)
		b.f("            uid %d;", 2000+len(user))
		b.l("            class super-user;", "            authentication {")
		b.f("                encrypted-password \"%s\"; ## SECRET-DATA", m.sha512Crypt(user))
		b.l("            }", "        }")
	}
	b.l("    }", "    services {", "        ssh;", "        netconf {", "            ssh;", "        }", "    }")
	b.l("    syslog {", "        file messages {", "            any notice;", "        }", "    }")
	b.l("    ntp {", "        server 192.0.2.123;", "    }", "}")
	b.l("interfaces {")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("    ge-%d/0/%d {", u.Slot-1, u.Port-1)
		if u.Shut {
			b.l("        disable;")
		}
		b.f("        description \"%s\";", u.Desc)
		b.l("        unit 0 {", "            family inet {")
		b.f("                address %s/24;", ip(u.Net, 1))
		b.l("            }", "        }", "    }")
	}
	b.l("}", "snmp {")
	b.f("    community %s {", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.l("        authorization read-only;", "    }", "}")
	b.l("routing-options {", "    static {")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("        route %s/24 next-hop %s;", u.Dest, ip(u.Net, 254))
	}
	b.l("    }", "}", "firewall {", "    family inet {", "        filter MGMT-IN {")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("            term t%d {", i)
		b.l("                from {")
		b.f("                    source-address {")
		b.f("                        %s/24;", ip(u.Net, 0))
		b.l("                    }", "                    protocol tcp;")
		b.f("                    destination-port %d;", u.Service)
		b.l("                }", "                then accept;", "            }")
	}
	b.l("        }", "    }", "}")
	return b.d
}

// renderScreenOS writes `get config`.
func renderScreenOS(m *model, n int) doc {
	var b builder
	b.l("set clock timezone 0", "set vrouter trust-vr sharable", "set vrouter \"untrust-vr\"", "exit", "set vrouter \"trust-vr\"", "unset auto-route-export", "exit")
	b.f("set admin name \"%s\"", m.user)
	b.f("set admin password \"%s\"", m.secret("admin", 30, cryptAlphabet[2:]))
	b.l("set admin auth timeout 10", "set admin auth server \"Local\"", "set admin format dos")
	b.l("set zone \"Trust\" vrouter \"trust-vr\"", "set zone \"Untrust\" vrouter \"trust-vr\"")
	for i := 0; i < n; i += 6 {
		u := m.unit(i)
		name := fmt.Sprintf("ethernet0/%d", i/6)
		b.f("set interface \"%s\" zone \"Trust\"", name)
		b.f("set interface %s ip %s/24", name, ip(u.Net, 1))
		b.f("set interface %s route", name)
		b.f("set interface %s manage ssh", name)
	}
	b.f("set hostname %s", m.host)
	b.l("set ntp server \"192.0.2.123\"")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("set address \"Untrust\" \"h-%s\" %s 255.255.255.255 \"%s\"", u.Remote, u.Remote, u.Desc)
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("set policy id %d from \"Trust\" to \"Untrust\"  \"Any\" \"h-%s\" \"TCP-%d\" permit log", i+1, u.Remote, u.Service)
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("set route %s/24 gateway %s", u.Dest, ip(u.Net, 254))
	}
	b.f("set snmp community \"%s\" Read-Only Trap-on version v2c", m.secret("snmp", 12, cryptAlphabet[2:]))
	return b.d
}

// renderFortiOS writes FortiOS `show`; ENC blobs are re-encrypted with a
// fresh IV at every show, as the real system does.
func renderFortiOS(m *model, n int) doc {
	var b builder
	// A blob is the key encrypted anew: a secret the device held, which
	// Device.Secrets lists (shows run under the device's lock).
	enc := func(v volatile) string {
		s := randString(v.R, 88, base64Alphabet)
		m.issued[s] = true
		return "ENC " + s + "=="
	}
	b.l("#config-version=FGT60F-7.4.8-FW-build2795-250523:opmode=0:vdom=0:user=" + m.user)
	b.vol(func(v volatile) string { return fmt.Sprintf("#conf_file_ver=%d", 1e15+v.ChangedAt.Unix()) })
	b.l("#buildno=2795", "#global_vdom=1", "config system global")
	b.l("    set admintimeout 30")
	b.f("    set hostname \"%s\"", m.host)
	b.l("    set timezone \"Etc/UTC\"", "end", "config system admin")
	b.f("    edit \"%s\"", m.user)
	b.l("        set accprofile \"super_admin\"", "        set vdom \"root\"")
	b.f("        set password ENC SH2%s", m.secret("admin", 60, base64Alphabet))
	b.l("    next", "end", "config system interface")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f("    edit \"port%d\"", i/4+1)
		b.l("        set vdom \"root\"")
		b.f("        set ip %s 255.255.255.0", ip(u.Net, 1))
		b.l("        set allowaccess ping https ssh")
		b.f("        set alias \"%s\"", u.Desc)
		if u.Shut {
			b.l("        set status down")
		}
		b.l("    next")
	}
	b.l("end", "config system ntp", "    set ntpsync enable", "    set type custom", "    config ntpserver", "        edit 1", "            set server \"192.0.2.123\"", "        next", "    end", "end")
	b.l("config firewall address")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("    edit \"h-%s\"", u.Remote)
		b.f("        set subnet %s 255.255.255.255", u.Remote)
		b.f("        set comment \"%s\"", u.Desc)
		b.l("    next")
	}
	b.l("end", "config firewall policy")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("    edit %d", i+1)
		b.f("        set name \"allow-%d-%d\"", i, u.Service)
		b.f("        set srcintf \"port%d\"", i/4+1)
		b.l("        set dstintf \"wan1\"", "        set action accept", "        set srcaddr \"all\"")
		b.f("        set dstaddr \"h-%s\"", u.Remote)
		b.l("        set schedule \"always\"")
		b.f("        set service \"TCP-%d\"", u.Service)
		b.l("    next")
	}
	b.l("end", "config router static")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("    edit %d", i/3+1)
		b.f("        set dst %s 255.255.255.0", u.Dest)
		b.f("        set gateway %s", ip(u.Net, 254))
		b.f("        set device \"port%d\"", i/4+1)
		b.l("    next")
	}
	b.l("end", "config vpn ipsec phase1-interface", "    edit \"hq\"", "        set interface \"wan1\"", "        set remote-gw 203.0.113.7")
	b.vol(func(v volatile) string { return "        set psksecret " + enc(v) })
	b.l("    next", "end")
	return b.d
}

// renderPANOS writes `show config running`.
func renderPANOS(m *model, n int) doc {
	var b builder
	b.l("config {", "  mgt-config {", "    users {")
	b.f("      %s {", m.user)
	b.f("        phash %s;", "$5$"+m.secret("user:salt", 8, cryptAlphabet[2:])+"$"+m.secret("user", 43, cryptAlphabet))
	b.l("        permissions {", "          role-based {", "            superuser yes;", "          }", "        }", "      }", "    }", "  }")
	b.l("  devices {", "    localhost.localdomain {", "      deviceconfig {", "        system {")
	b.f("          hostname %s;", m.host)
	b.l("          ntp-servers {", "            primary-ntp-server {", "              ntp-server-address 192.0.2.123;", "            }", "          }", "        }", "      }")
	b.l("      network {", "        interface {", "          ethernet {")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f("            ethernet1/%d {", i/4+1)
		b.l("              layer3 {", "                ip {")
		b.f("                  %s/24;", ip(u.Net, 1))
		b.l("                }", "              }")
		b.f("              comment \"%s\";", u.Desc)
		b.l("            }")
	}
	b.l("          }", "        }", "        virtual-router {", "          default {", "            routing-table {", "              ip {", "                static-route {")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("                  r%d {", i)
		b.f("                    destination %s/24;", u.Dest)
		b.f("                    nexthop {")
		b.f("                      ip-address %s;", ip(u.Net, 254))
		b.l("                    }", "                  }")
	}
	b.l("                }", "              }", "            }", "          }", "        }", "      }")
	b.l("      vsys {", "        vsys1 {", "          address {")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("            h-%s {", strings.ReplaceAll(u.Remote, ".", "-"))
		b.f("              ip-netmask %s/32;", u.Remote)
		b.f("              description \"%s\";", u.Desc)
		b.l("            }")
	}
	b.l("          }", "          rulebase {", "            security {", "              rules {")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("                allow-%d {", i)
		b.l("                  from trust;", "                  to untrust;", "                  source any;")
		b.f("                  destination h-%s;", strings.ReplaceAll(u.Remote, ".", "-"))
		b.f("                  service tcp-%d;", u.Service)
		b.l("                  action allow;", "                }")
	}
	b.l("              }", "            }", "          }", "        }", "      }", "    }", "  }", "}")
	return b.d
}

// renderRouterOS writes `/export show-sensitive`.
func renderRouterOS(m *model, n int) doc {
	var b builder
	b.vol(func(v volatile) string {
		return "# " + v.Now.UTC().Format("2006-01-02 15:04:05") + " by RouterOS 7.10.1"
	})
	b.l("# software id = " + strings.ToUpper(m.secret("swid", 4, hexDigits)+"-"+m.secret("swid2", 4, hexDigits)))
	b.l("#", "# model = RB4011iGS+", "# serial number = "+strings.ToUpper(m.secret("serial", 12, hexDigits)))
	b.l("/interface bridge", "add name=bridge1 vlan-filtering=yes")
	b.l("/interface ethernet")
	for i := 0; i < min(n, 10); i++ {
		b.f("set [ find default-name=ether%d ] comment=\"%s\"", i+1, m.unit(i).Desc)
	}
	b.l("/interface vlan")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("add comment=\"%s\" interface=bridge1 name=vlan%d vlan-id=%d", u.Desc, u.VLAN, u.VLAN)
	}
	b.l("/ip address")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("add address=%s/24 interface=vlan%d network=%s", ip(u.Net, 1), u.VLAN, ip(u.Net, 0))
	}
	b.l("/ip firewall filter")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("add action=accept chain=forward dst-address=%s dst-port=%d protocol=tcp src-address=%s/24", u.Remote, u.Service, ip(u.Net, 0))
	}
	b.l("/ip route")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("add dst-address=%s/24 gateway=%s", u.Dest, ip(u.Net, 254))
	}
	b.l("/ppp secret")
	b.f("add name=branch1 password=%s service=l2tp", m.secret("ppp", 16, cryptAlphabet[2:]))
	b.l("/snmp community")
	b.f("set [ find default=yes ] name=%s", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.l("/system identity")
	b.f("set name=%s", m.host)
	b.l("/system ntp client", "set enabled=yes", "/system ntp client servers", "add address=192.0.2.123")
	return b.d
}

// renderEXOS writes an ExtremeXOS `show configuration`.
func renderEXOS(m *model, n int) doc {
	var b builder
	b.l("#", "# Module devmgr configuration.", "#")
	b.f("configure snmp sysName \"%s\"", m.host)
	b.l("configure snmp sysContact \"noc@example.net\"", "configure sys-recovery-level switch reset", "", "#", "# Module vlan configuration.", "#")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("create vlan \"VLAN%d\"", u.VLAN)
		b.f("configure vlan VLAN%d tag %d", u.VLAN, u.VLAN)
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("configure vlan VLAN%d add ports %d untagged", m.unit(i/8*8).VLAN, i+1)
		b.f("configure ports %d display-string \"%s\"", i+1, u.Desc)
		if u.Shut {
			b.f("disable ports %d", i+1)
		}
	}
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("configure vlan VLAN%d ipaddress %s 255.255.255.0", u.VLAN, ip(u.Net, 1))
	}
	b.l("", "#", "# Module rtmgr configuration.", "#")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("configure iproute add %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("", "#", "# Module aaa configuration.", "#")
	b.f("configure account %s encrypted \"$5$%s$%s\"", m.user, m.secret("user:salt", 8, cryptAlphabet[2:]), m.secret("user", 43, cryptAlphabet))
	b.l("", "#", "# Module ntp configuration.", "#", "configure ntp server add 192.0.2.123 vr VR-Mgmt", "enable ntp vlan Mgmt")
	return b.d
}

// renderVyOS writes `show configuration commands`.
func renderVyOS(m *model, n int) doc {
	var b builder
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("set interfaces ethernet eth%d address '%s/24'", i, ip(u.Net, 1))
		b.f("set interfaces ethernet eth%d description '%s'", i, u.Desc)
		if u.Shut {
			b.f("set interfaces ethernet eth%d disable", i)
		}
		b.f("set interfaces ethernet eth%d hw-id '00:50:56:%02x:%02x:%02x'", i, m.seed%256, i/256%256, i%256)
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("set firewall ipv4 name WAN_IN rule %d action 'accept'", (i+1)*10)
		b.f("set firewall ipv4 name WAN_IN rule %d destination address '%s'", (i+1)*10, u.Remote)
		b.f("set firewall ipv4 name WAN_IN rule %d destination port '%d'", (i+1)*10, u.Service)
		b.f("set firewall ipv4 name WAN_IN rule %d protocol 'tcp'", (i+1)*10)
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("set protocols static route %s/24 next-hop %s", u.Dest, ip(u.Net, 254))
	}
	b.l("set service ntp server 192.0.2.123", "set service ssh port '22'", "set system config-management commit-revisions '100'")
	b.f("set system host-name '%s'", m.host)
	b.f("set system login user %s authentication encrypted-password '%s'", m.user, m.sha512Crypt("user"))
	b.l("set system syslog global facility all level 'info'")
	return b.d
}

// renderLinux writes the files a Linux host is backed up by.
func renderLinux(m *model, n int) map[string]doc {
	var hostname, hosts, resolv, ifaces builder
	hostname.l(m.host)
	hosts.l("127.0.0.1\tlocalhost")
	hosts.f("127.0.1.1\t%s", m.host)
	hosts.l("", "# The following lines are desirable for IPv6 capable hosts", "::1     ip6-localhost ip6-loopback", "")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		hosts.f("%s\t%s.example.net\t# %s", u.Remote, strings.ReplaceAll(strings.ToLower(strings.Fields(u.Desc)[0]), " ", "-"), u.Desc)
	}
	resolv.l("# Generated by NetworkManager", "search example.net", "nameserver 192.0.2.53", "nameserver 192.0.2.54")
	ifaces.l("auto lo", "iface lo inet loopback", "")
	for i := 0; i < max(1, n/8); i++ {
		u := m.unit(i)
		ifaces.f("auto eth%d", i)
		ifaces.f("iface eth%d inet static", i)
		ifaces.f("    address %s/24", ip(u.Net, 10))
		if i == 0 {
			ifaces.f("    gateway %s", ip(u.Net, 1))
		}
		ifaces.l("")
	}
	return map[string]doc{
		"cat /etc/hostname":           hostname.d,
		"cat /etc/hosts":              hosts.d,
		"cat /etc/resolv.conf":        resolv.d,
		"cat /etc/network/interfaces": ifaces.d,
	}
}

// renderers map a platform to its configuration writer. The key "" in
// the result answers every configuration command of the personality.
var renderers = map[string]func(m *model, n int) map[string]doc{
	"cisco_ios":         single(renderIOS),
	"cisco_xe":          single(renderIOS),
	"ruijie_os":         single(renderIOS),
	"cisco_nxos":        single(renderNXOS),
	"cisco_xr":          single(renderXR),
	"cisco_asa":         single(renderASA),
	"arista_eos":        single(renderEOS),
	"dell_os10":         single(renderOS10),
	"hp_procurve":       single(renderProCurve),
	"aruba_aoscx":       single(renderAOSCX),
	"huawei_vrp":        single(renderVRP),
	"huawei_vrpv8":      single(renderVRP),
	"hp_comware":        single(renderComware),
	"h3c_comware":       single(renderComware),
	"juniper_junos":     single(renderJunos),
	"juniper_screenos":  single(renderScreenOS),
	"fortinet":          single(renderFortiOS),
	"paloalto_panos":    single(renderPANOS),
	"mikrotik_routeros": single(renderRouterOS),
	"extreme_exos":      single(renderEXOS),
	"vyos":              single(renderVyOS),
	"linux":             renderLinux,
}

func single(fn func(m *model, n int) doc) func(m *model, n int) map[string]doc {
	return func(m *model, n int) map[string]doc { return map[string]doc{"": fn(m, n)} }
}
