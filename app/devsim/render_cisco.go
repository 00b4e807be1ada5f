package devsim

import (
	"fmt"
	"strings"
)

// renderIOS writes IOS, IOS-XE and Ruijie RGOS configurations.
func renderIOS(m *model, n int) doc {
	var b builder
	version := map[string]string{"cisco_ios": "15.7", "cisco_xe": "17.9", "ruijie_os": "RGOS 12.5(4)B0703"}[m.platform]
	b.l("Building configuration...", "")
	b.sizeLine("Current configuration : %d bytes")
	b.l("!")
	if m.platform != "ruijie_os" {
		b.vol(func(v volatile) string {
			return "! Last configuration change at " + ciscoTime(v.Now) + " by " + m.user
		})
		b.vol(func(v volatile) string {
			return "! NVRAM config last updated at " + ciscoTime(v.ChangedAt) + " by " + m.user
		})
		b.l("!")
	}
	b.f("version %s", version)
	b.l("service timestamps debug datetime msec", "service timestamps log datetime msec", "service password-encryption", "!")
	b.f("hostname %s", m.host)
	b.l("!", "boot-start-marker", "boot-end-marker", "!")
	b.f("enable secret 9 %s", m.ciscoType9("enable"))
	b.l("!", "aaa new-model", "aaa authentication login default local", "aaa authorization exec default local", "!")
	b.l("clock timezone UTC 0 0", "!", "no ip domain lookup")
	b.f("ip domain name %s.example.net", strings.ToLower(m.host))
	b.l("ip ssh version 2", "!")
	b.f("username %s privilege 15 secret 9 %s", m.user, m.ciscoType9("user"))
	b.f("username backup privilege 15 secret 9 %s", m.ciscoType9("backup"))
	b.f("username noc privilege 5 password 7 %s", strings.ToUpper(m.secret("noc7", 22, hexDigits)))
	b.l("!")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f(" name VLAN%d_%s", u.VLAN, strings.ToUpper(descWords[i%len(descWords)]))
		b.l("!")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface GigabitEthernet%d/0/%d", u.Slot, u.Port)
		b.f(" description %s", u.Desc)
		if u.Routed {
			b.l(" no switchport")
			b.f(" ip address %s 255.255.255.0", ip(u.Net, 1))
			b.l(" ip ospf network point-to-point")
		} else {
			b.l(" switchport mode access")
			b.f(" switchport access vlan %d", u.VLAN)
			b.l(" spanning-tree portfast")
		}
		if u.Shut {
			b.l(" shutdown")
		}
		b.l("!")
	}
	b.l("interface Loopback0")
	b.f(" ip address 10.255.%d.%d 255.255.255.255", m.seed%200, m.seed%250+1)
	b.l("!", "router ospf 1")
	b.f(" router-id 10.255.%d.%d", m.seed%200, m.seed%250+1)
	for i := 0; i < n; i += 4 {
		b.f(" network %s 0.0.0.255 area 0", ip(m.unit(i).Net, 0))
	}
	b.l("!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		if i%3 == 0 {
			b.f("ip route %s 255.255.255.0 %s name R%d", u.Dest, ip(u.Net, 254), i)
		}
	}
	b.l("!", "ip access-list extended MGMT-IN")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f(" %d permit tcp %s 0.0.0.255 host %s eq %d", (i+1)*10, ip(u.Net, 0), u.Remote, u.Service)
	}
	b.f(" %d deny ip any any log", (n+1)*10)
	b.l("!")
	b.f("snmp-server community %s RO 99", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.f("snmp-server location DC1 rack %d", m.seed%40+1)
	b.l("snmp-server contact noc@example.net")
	b.f("snmp-server host 192.0.2.10 version 2c %s", m.secret("trap", 10, cryptAlphabet[2:]))
	b.l("!")
	b.l("ntp server 192.0.2.123 prefer", "ntp server 192.0.2.124")
	if m.platform == "cisco_ios" {
		b.vol(func(v volatile) string { return fmt.Sprintf("ntp clock-period %d", 17179800+v.R.IntN(200)) })
	}
	b.l("!", "line con 0", " logging synchronous", "line vty 0 4", " transport input ssh", "line vty 5 15", " transport input ssh", "!", "end")
	return b.d
}

// renderNXOS writes an NX-OS running configuration.
func renderNXOS(m *model, n int) doc {
	var b builder
	b.l("", "!Command: show running-config")
	b.vol(func(v volatile) string {
		return "!Running configuration last done at: " + v.ChangedAt.UTC().Format("Mon Jan  2 15:04:05 2006")
	})
	b.vol(func(v volatile) string { return "!Time: " + v.Now.UTC().Format("Mon Jan  2 15:04:05 2006") })
	b.l("", "version 9.3(10) Bios:version 07.69")
	b.f("hostname %s", m.host)
	b.l("", "feature ospf", "feature interface-vlan", "feature lacp", "feature lldp", "")
	b.f("username %s password 5 %s  role network-admin", m.user, m.sha512Crypt("user"))
	b.f("username backup password 5 %s  role network-operator", m.sha512Crypt("backup"))
	b.l("ip domain-lookup")
	b.f("snmp-server user %s network-admin auth md5 0x%s priv 0x%s localizedkey", m.user, m.secret("snmpauth", 32, hexDigits), m.secret("snmppriv", 32, hexDigits))
	b.l("ntp server 192.0.2.123 use-vrf management", "")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f("  name VLAN%d", u.VLAN)
	}
	b.l("", "vrf context management", "  ip route 0.0.0.0/0 192.0.2.1", "")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface Ethernet%d/%d", u.Slot, u.Port)
		b.f("  description %s", u.Desc)
		if u.Routed {
			b.l("  no switchport")
			b.f("  ip address %s/24", ip(u.Net, 1))
			b.l("  ip router ospf 1 area 0.0.0.0")
		} else {
			b.f("  switchport access vlan %d", u.VLAN)
		}
		if !u.Shut {
			b.l("  no shutdown")
		}
		b.l("")
	}
	b.l("interface mgmt0", "  vrf member management", "  ip address 192.0.2.20/24", "line console", "line vty")
	b.l("router ospf 1")
	b.f("  router-id 10.255.0.%d", m.seed%250+1)
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s/24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("")
	return b.d
}

// renderXR writes an IOS-XR running configuration.
func renderXR(m *model, n int) doc {
	var b builder
	b.l("Building configuration...", "!! IOS XR Configuration 7.5.2")
	b.vol(func(v volatile) string {
		return "!! Last configuration change at " + v.ChangedAt.UTC().Format("Mon Jan  2 15:04:05 2006") + " by " + m.user
	})
	b.l("!")
	b.f("hostname %s", m.host)
	b.l("clock timezone UTC 0", "logging console informational")
	b.f("username %s", m.user)
	b.l(" group root-lr", " group cisco-support")
	b.f(" secret 10 %s", m.sha512Crypt("user"))
	b.l("!", "ntp", " server 192.0.2.123", "!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface GigabitEthernet0/0/%d/%d", u.Slot-1, u.Port-1)
		b.f(" description %s", u.Desc)
		b.f(" ipv4 address %s 255.255.255.0", ip(u.Net, 1))
		if u.Shut {
			b.l(" shutdown")
		}
		b.l("!")
	}
	b.l("router static", " address-family ipv4 unicast")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("  %s/24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l(" !", "!", "ipv4 access-list MGMT-IN")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f(" %d permit tcp %s 0.0.0.255 host %s eq %d", (i+1)*10, ip(u.Net, 0), u.Remote, u.Service)
	}
	b.l("!", "ssh server v2", "ssh server vrf default", "end")
	return b.d
}

// renderASA writes `more system:running-config`, secrets unmasked.
func renderASA(m *model, n int) doc {
	var b builder
	b.l(": Saved", ":")
	b.l(": Serial Number: JAD2" + strings.ToUpper(m.secret("serial", 7, hexDigits)))
	b.l(": Hardware:   ASA5516, 8192 MB RAM, CPU Atom C2000 series 2416 MHz, 1 CPU (8 cores)")
	b.vol(func(v volatile) string {
		return ": Written by enable_15 at " + v.Now.UTC().Format("15:04:05.000 MST Mon Jan 2 2006")
	})
	b.l("!", "ASA Version 9.16(4) ", "!")
	b.f("hostname %s", m.host)
	b.f("domain-name %s.example.net", strings.ToLower(m.host))
	b.f("enable password %s pbkdf2", "$sha512$5000$"+m.secret("enable", 24, base64Alphabet)+"==$"+m.secret("enable2", 22, base64Alphabet)+"==")
	b.l("names", "no mac-address auto", "!")
	for i := 0; i < n; i += 6 {
		u := m.unit(i)
		b.f("interface GigabitEthernet1/%d", i/6+1)
		b.f(" description %s", u.Desc)
		b.f(" nameif inside%d", i/6)
		b.f(" security-level %d", 100-i%100)
		b.f(" ip address %s 255.255.255.0", ip(u.Net, 1))
		if u.Shut {
			b.l(" shutdown")
		}
		b.l("!")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("object network h-%s", u.Remote)
		b.f(" host %s", u.Remote)
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("access-list OUTSIDE_IN extended permit tcp %s 255.255.255.0 object h-%s eq %d", ip(u.Net, 0), u.Remote, u.Service)
	}
	b.l("pager lines 24", "logging enable", "logging timestamp", "mtu inside0 1500")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("route inside%d %s 255.255.255.0 %s 1", i/6%((n+5)/6), u.Dest, ip(u.Net, 254))
	}
	b.l("crypto ikev1 policy 10", " authentication pre-share", " encryption aes-256", " hash sha", " group 14")
	b.l("tunnel-group 203.0.113.7 type ipsec-l2l", "tunnel-group 203.0.113.7 ipsec-attributes")
	b.f(" ikev1 pre-shared-key %s", m.secret("psk", 24, cryptAlphabet[2:]))
	b.f("username %s password %s pbkdf2 privilege 15", m.user, "$sha512$5000$"+m.secret("user", 24, base64Alphabet)+"==$"+m.secret("user2", 22, base64Alphabet)+"==")
	b.l("ssh 192.0.2.0 255.255.255.0 inside0", "ssh version 2", "ntp server 192.0.2.123")
	b.f("snmp-server community %s", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.vol(func(v volatile) string { return "Cryptochecksum:" + randString(v.R, 32, hexDigits) })
	b.l(": end")
	return b.d
}

// renderEOS writes an Arista EOS running configuration.
func renderEOS(m *model, n int) doc {
	var b builder
	b.l("! Command: show running-config")
	b.f("! device: %s (DCS-7050SX3-48YC8, EOS-4.30.2F)", m.host)
	b.l("!", "! boot system flash:/EOS-4.30.2F.swi", "!", "no aaa root", "!")
	b.f("username %s privilege 15 role network-admin secret sha512 %s", m.user, m.sha512Crypt("user"))
	b.f("username backup privilege 15 role network-operator secret sha512 %s", m.sha512Crypt("backup"))
	b.l("!", "transceiver qsfp default-mode 4x10G", "!")
	b.f("hostname %s", m.host)
	b.l("ip name-server vrf MGMT 192.0.2.53", "!")
	b.f("snmp-server community %s ro", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.l("!", "spanning-tree mode mstp", "!")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f("   name VLAN%d", u.VLAN)
		b.l("!")
	}
	b.l("vrf instance MGMT", "!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface Ethernet%d", i+1)
		b.f("   description %s", u.Desc)
		if u.Routed {
			b.l("   no switchport")
			b.f("   ip address %s/24", ip(u.Net, 1))
		} else {
			b.f("   switchport access vlan %d", u.VLAN)
		}
		if u.Shut {
			b.l("   shutdown")
		}
		b.l("!")
	}
	b.l("interface Management1", "   vrf MGMT", "   ip address 192.0.2.30/24", "!", "ip routing", "no ip routing vrf MGMT", "!")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s/24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("!", "ntp server vrf MGMT 192.0.2.123", "!", "management api http-commands", "   no shutdown", "!", "end")
	return b.d
}

// renderOS10 writes a Dell OS10 running configuration.
func renderOS10(m *model, n int) doc {
	var b builder
	b.l("! Version 10.5.4.2")
	b.vol(func(v volatile) string {
		return "! Last configuration change at " + v.Now.UTC().Format("Jan  02 15:04:05 2006")
	})
	b.l("!", "ip vrf default", "!", "iscsi target port 860", "iscsi target port 3260")
	b.f("hostname %s", m.host)
	b.f("system-user linuxadmin password %s", m.sha512Crypt("linuxadmin"))
	b.f("username %s password %s role sysadmin priv-lvl 15", m.user, m.sha512Crypt("user"))
	b.l("aaa authentication login default local", "aaa authentication login console local", "!")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("interface vlan%d", u.VLAN)
		b.l(" no shutdown")
		b.f(" ip address %s/24", ip(u.Net, 1))
		b.l("!")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface ethernet1/1/%d", i+1)
		b.f(" description \"%s\"", u.Desc)
		if u.Shut {
			b.l(" shutdown")
		} else {
			b.l(" no shutdown")
		}
		b.l(" switchport mode access")
		b.f(" switchport access vlan %d", u.VLAN)
		b.l(" flowcontrol receive on", "!")
	}
	b.l("interface mgmt1/1/1", " no shutdown", " no ip address dhcp", " ip address 192.0.2.40/24", "!")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s/24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("!", "ntp server 192.0.2.123")
	b.f("snmp-server community %s ro", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.l("!", "end")
	return b.d
}

// renderProCurve writes an HP ProCurve / Aruba OS-Switch configuration.
func renderProCurve(m *model, n int) doc {
	var b builder
	b.l("", "Running configuration:", "")
	b.l("; J9727A Configuration Editor; Created on release #WB.16.10.0012", "; Ver #14:01.44.00.04.19.02.13.98.82.34.61.18.28.f3.84.9c.63.ff.37.27:05", "")
	b.f("hostname \"%s\"", m.host)
	b.l("module 1 type j9727a", "timesync sntp", "sntp unicast", "sntp server priority 1 192.0.2.123")
	b.f("snmp-server community \"%s\" operator", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.l("oobm", "   ip address 192.0.2.50 255.255.255.0", "   exit")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface %d", i+1)
		b.f("   name \"%s\"", u.Desc)
		if u.Shut {
			b.l("   disable")
		}
		b.l("   exit")
	}
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f("   name \"VLAN%d\"", u.VLAN)
		b.f("   untagged %d-%d", i+1, min(i+8, n))
		b.f("   ip address %s 255.255.255.0", ip(u.Net, 1))
		b.l("   exit")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("spanning-tree", "no tftp server", "no autorun", "no dhcp config-file-update", "password manager")
	b.f("password operator user-name \"backup\" sha1 \"%s\"", m.secret("backup", 40, hexDigits))
	return b.d
}

// renderAOSCX writes an Aruba AOS-CX running configuration.
func renderAOSCX(m *model, n int) doc {
	var b builder
	b.l("Current configuration:", "!", "!Version ArubaOS-CX PL.10.10.1090", "!export-password: default")
	b.f("hostname %s", m.host)
	b.f("user %s group administrators password ciphertext AQBapX%s", m.user, m.secret("user", 120, base64Alphabet))
	b.l("ntp server 192.0.2.123 iburst", "ntp enable", "!", "ssh server vrf mgmt")
	b.f("snmp-server community %s", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.l("!")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f("    name VLAN%d", u.VLAN)
	}
	b.l("spanning-tree")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface 1/1/%d", i+1)
		b.f("    description %s", u.Desc)
		if !u.Shut {
			b.l("    no shutdown")
		}
		if u.Routed {
			b.l("    routing")
			b.f("    ip address %s/24", ip(u.Net, 1))
		} else {
			b.l("    no routing")
			b.f("    vlan access %d", u.VLAN)
		}
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s/24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("!", "https-server vrf mgmt")
	return b.d
}
