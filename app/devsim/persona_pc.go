package devsim

import (
	"fmt"
	"strings"
)

// Personalities of pfSense, OPNsense, Netgate TNSR, Check Point Gaia,
// Cumulus Linux, Ubiquiti EdgeOS, Opengear and F5 BIG-IP.

// cumulusDetect is the Cumulus Linux driver's default command (NVUE,
// else NCLU, else the files); the simulated switch runs NVUE.
const cumulusDetect = "nv config show -o commands 2>/dev/null || net show configuration commands 2>/dev/null || cat /etc/network/interfaces /etc/frr/frr.conf"

// tnsrPagerErase is how TNSR wipes "--More--" after a key: eight
// backspaces, eight spaces, eight backspaces (as recorded on TNSR 24.10).
const tnsrPagerErase = "\b\b\b\b\b\b\b\b        \b\b\b\b\b\b\b\b"

func init() {
	// pfSense and OPNsense: FreeBSD; an interactive login starts the
	// console menu, so backups use exec requests and only the exec side
	// matters. pfSense written from the pfSense documentation (Config
	// History, "Backup & Restore"); no public capture. OPNsense's
	// config.xml layout follows the recording of OPNsense 24.7.
	for _, fw := range []struct {
		platform, host, file, ssh, motd, shellErr string
	}{
		{"pfsense", "pfSense", "/cf/conf/config.xml", "SSH-2.0-OpenSSH_9.7",
			"*** Welcome to pfSense 2.7.2-RELEASE (amd64) on {host} ***\n", "{word}: Command not found.\n"},
		{"opnsense", "OPNsense", "/conf/config.xml", "SSH-2.0-OpenSSH_9.7",
			"----------------------------------------------\n|      Hello, this is OPNsense 24.7          |\n----------------------------------------------\n", "{word}: Command not found.\n"},
	} {
		prompt := "[2.7.2-RELEASE][{user}@{host}]/root: "
		if fw.platform == "opnsense" {
			prompt = "{user}@{host}:~ % "
		}
		addPersonality(Personality{
			Platform:            fw.platform,
			DefaultHostname:     fw.host,
			SSHVersion:          fw.ssh,
			MOTD:                strings.ReplaceAll(fw.motd, "{host}", fw.host),
			UserPrompt:          prompt,
			EnablePrompt:        prompt,
			ConfigPrompt:        prompt,
			ExitCommands:        []string{"exit", "logout"},
			ConfigCommands:      []string{"cat " + fw.file},
			VersionCommands:     []string{"cat /etc/version", "opnsense-version"},
			InvalidInput:        fw.shellErr,
			LoginUserPrompt:     "login: ",
			LoginPasswordPrompt: "Password:",
			LoginFailed:         "Login incorrect\n",
			ExecLF:              true,
		}, single(func(m *model, n int) doc { return renderConfigXML(m, n) }), func(m *model) doc {
			var b builder
			if m.platform == "opnsense" {
				b.l("OPNsense 24.7.12_4 (amd64)")
			} else {
				b.l("2.7.2-RELEASE")
			}
			return b.d
		})
	}

	// Netgate TNSR: the prompt, banner, pager and its erase are those of
	// the recordings of TNSR 23.11 and 24.10.
	addPersonality(Personality{
		Platform:        "netgate_tnsr",
		DefaultHostname: "tnsr-01",
		SSHVersion:      "SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.10",
		MOTD: "Welcome to Netgate TNSR Version: 24.10-3\n\n\t* Documentation:  https://docs.netgate.com/tnsr/en/latest/\n\t* Support:        https://www.netgate.com/support\n\n" +
			"\n\nVersion: 24.10-3\n\nFor information see 'show documentation'\n\n",
		PromptPrefix:    "\r",
		UserPrompt:      "{host} tnsr# ",
		EnablePrompt:    "{host} tnsr# ",
		ConfigPrompt:    "{host} tnsr(config)# ",
		ConfigEnter:     []string{"configure", "configure terminal"},
		ConfigExit:      []string{"exit", "end"},
		ExitCommands:    []string{"exit"},
		Pager:           "--More--",
		PagerErase:      tnsrPagerErase,
		PageLines:       24,
		ConfigCommands:  []string{"show configuration running cli", "show configuration startup cli"},
		VersionCommands: []string{"show version all", "show version"},
		InvalidInput:    "CLI syntax error: \"{cmd}\": Unknown command\n",
		// No telnet server; the fields are set for completeness.
		LoginUserPrompt:     "login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login incorrect\n",
	}, single(renderTNSR), func(m *model) doc {
		var b builder
		b.l("                tnsr-release 24.10-3", "                        tnsr 24.10-3", "                         vpp 24.06-135+tnsr-v24.10-3+jammy+D24.03")
		return b.d
	})

	// Check Point Gaia clish. Written from the Gaia R81 Administration
	// Guide and CLI reference; no public capture.
	addPersonality(Personality{
		Platform:            "checkpoint_gaia",
		DefaultHostname:     "gw-01",
		SSHVersion:          "SSH-2.0-OpenSSH_7.8",
		Banner:              "This system is for authorized use only.\n",
		MOTD:                "Last login: {time} from 127.0.0.1\n",
		UserPrompt:          "{host}> ",
		EnablePrompt:        "{host}> ",
		ConfigPrompt:        "{host}> ",
		ExitCommands:        []string{"exit", "quit"},
		PagingOff:           []string{"set clienv rows 0"},
		Replies:             map[string]string{"set clienv rows 0": ""},
		Pager:               "-- More --",
		PagerErase:          "\r          \r",
		PageLines:           24,
		ConfigCommands:      []string{"show configuration"},
		VersionCommands:     []string{"show version all", "show asset all"},
		InvalidInput:        "CLINFR0329  Invalid command:'{cmd}'.\n",
		LoginUserPrompt:     "login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login incorrect\n",
	}, single(renderGaia), func(m *model) doc {
		var b builder
		b.l("Product version Check Point Gaia R81.20", "OS build 631", "OS kernel version 3.10.0-957.21.3cpx86_64", "OS edition 64-bit")
		return b.d
	})

	// Cumulus Linux 5.x with NVUE, reached over SSH exec; the shell
	// prompt and banner follow the recordings of Cumulus VX 5.4 and an
	// MSN2010 on 5.9.
	addPersonality(Personality{
		Platform:            "cumulus_linux",
		DefaultHostname:     "leaf01",
		SSHVersion:          "SSH-2.0-OpenSSH_8.4p1 Debian-5+deb11u3",
		MOTD:                "Linux {host} 5.10.0-cl-1-amd64 #1 SMP Debian 5.10.189-1+cl5.9.2u1 x86_64\n\nWelcome to NVIDIA Cumulus (R) Linux (R)\n\nLast login: {time} from 127.0.0.1\n",
		UserPrompt:          "{user}@{host}:mgmt:~$ ",
		EnablePrompt:        "{user}@{host}:mgmt:~$ ",
		ConfigPrompt:        "{user}@{host}:mgmt:~$ ",
		ExitCommands:        []string{"exit", "logout"},
		ConfigCommands:      []string{cumulusDetect, "nv config show -o commands"},
		VersionCommands:     []string{"cat /etc/lsb-release", "nv show system"},
		InvalidInput:        "bash: line 1: {word}: command not found\n",
		LoginUserPrompt:     "{host} login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "\nLogin incorrect\n",
		ExecLF:              true,
	}, single(renderCumulusNVUE), func(m *model) doc {
		var b builder
		b.l("DISTRIB_ID=\"Cumulus Linux\"", "DISTRIB_RELEASE=5.9.2", "DISTRIB_DESCRIPTION=\"Cumulus Linux 5.9.2\"")
		return b.d
	})

	// Ubiquiti EdgeOS (Vyatta): written from Ubiquiti's EdgeRouter CLI
	// documentation; no public capture.
	addPersonality(Personality{
		Platform:            "ubiquiti_edgeos",
		DefaultHostname:     "ubnt",
		SSHVersion:          "SSH-2.0-OpenSSH_7.4p1 Debian-10+deb9u7",
		MOTD:                "Welcome to EdgeOS\n\nBy logging in, accessing, or using the Ubiquiti product, you\nacknowledge that you have read and understood the Ubiquiti\nLicense Agreement (available in the Web UI at, by default,\nhttp://192.168.1.1) and agree to be bound by its terms.\n\nLast login: {time} from 127.0.0.1\n",
		UserPrompt:          "{user}@{host}:~$ ",
		EnablePrompt:        "{user}@{host}:~$ ",
		ConfigPrompt:        "[edit]\n{user}@{host}# ",
		ConfigEnter:         []string{"configure"},
		ConfigExit:          []string{"exit", "exit discard"},
		ConfigExitReply:     "exit\n",
		ExitCommands:        []string{"exit", "logout"},
		PagingOff:           []string{"terminal length 0"},
		Replies:             map[string]string{"terminal length 0": ""},
		Pager:               ":",
		PagerErase:          "\r\x1b[K",
		PageLines:           24,
		ConfigCommands:      []string{"show configuration commands | no-more", "show configuration commands", "show configuration"},
		VersionCommands:     []string{"show version"},
		InvalidInput:        "\n  Invalid command: [{word}]\n\n",
		LoginUserPrompt:     "{host} login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "\nLogin incorrect\n",
		ExecLF:              true,
	}, single(renderEdgeOS), func(m *model) doc {
		var b builder
		b.l("Version:      v2.0.9-hotfix.7", "Build ID:     5619690", "Build on:     05/26/23 09:02", "HW model:     EdgeRouter 4")
		return b.d
	})

	// Opengear console server: embedded Linux with a BusyBox shell,
	// backed up over SSH exec. Written from the Opengear User Manual
	// ("config" command-line tool); no public capture.
	addPersonality(Personality{
		Platform:            "opengear",
		DefaultHostname:     "im7200",
		SSHVersion:          "SSH-2.0-OpenSSH_8.8",
		MOTD:                "",
		UserPrompt:          "{user}@{host}:~$ ",
		EnablePrompt:        "{user}@{host}:~# ",
		ConfigPrompt:        "{user}@{host}:~# ",
		ExitCommands:        []string{"exit", "logout"},
		ConfigCommands:      []string{"config -g config"},
		VersionCommands:     []string{"cat /etc/version"},
		InvalidInput:        "-sh: {word}: not found\n",
		LoginUserPrompt:     "{host} login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login incorrect\n",
		ExecLF:              true,
	}, single(renderOpengear), func(m *model) doc {
		var b builder
		b.l("OpenGear/IM72xx Version 4.13.0 7d66c4b3 -- Tue Jun 13 04:17:08 UTC 2023")
		return b.d
	})

	// F5 BIG-IP: bash over SSH exec running tmsh; the list layout follows
	// the recording of a BIG-IP tenant.
	addPersonality(Personality{
		Platform:            "f5_tmos",
		DefaultHostname:     "bigip01.example.net",
		SSHVersion:          "SSH-2.0-OpenSSH_7.4",
		Banner:              "You are attempting to log into a BIG-IP system.\n",
		MOTD:                "Last login: {time} from 127.0.0.1\n",
		UserPrompt:          "[{user}@{host}:Active:Standalone] ~ # ",
		EnablePrompt:        "[{user}@{host}:Active:Standalone] ~ # ",
		ConfigPrompt:        "[{user}@{host}:Active:Standalone] ~ # ",
		ExitCommands:        []string{"exit", "logout"},
		ConfigCommands:      []string{"tmsh -q list", "tmsh -q list net route all"},
		VersionCommands:     []string{"tmsh -q show sys version"},
		InvalidInput:        "bash: {word}: command not found\n",
		LoginUserPrompt:     "login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login incorrect\n",
		ExecLF:              true,
	}, renderTMOS, func(m *model) doc {
		var b builder
		b.l("", "Sys::Version", "Main Package", "  Product     BIG-IP", "  Version     17.1.1.3", "  Build       0.0.5", "  Edition     Point Release 3")
		return b.d
	})
}

// renderConfigXML writes pfSense's /cf/conf/config.xml or OPNsense's
// /conf/config.xml: system with users (bcrypt hashes), interfaces, VLANs,
// static routes and filter rules, and the <revision> stamp a save
// writes.
func renderConfigXML(m *model, n int) doc {
	root := "pfsense"
	if m.platform == "opnsense" {
		root = "opnsense"
	}
	var b builder
	b.l(`<?xml version="1.0"?>`, "<"+root+">")
	if root == "pfsense" {
		b.l("\t<version>23.3</version>", "\t<lastchange></lastchange>")
	} else {
		b.l("  <theme>opnsense</theme>")
	}
	ind := "\t"
	if root == "opnsense" {
		ind = "  "
	}
	i2, i3, i4 := ind+ind, ind+ind+ind, ind+ind+ind+ind
	b.l(ind + "<system>")
	b.f("%s<hostname>%s</hostname>", i2, m.host)
	b.l(i2+"<domain>example.net</domain>", i2+"<timezone>Etc/UTC</timezone>", i2+"<user>")
	b.f("%s<name>%s</name>", i3, m.user)
	b.l(i3 + "<scope>system</scope>")
	b.f("%s<bcrypt-hash>$2y$10$%s</bcrypt-hash>", i3, m.secret("user", 53, cryptAlphabet))
	b.l(i3+"<uid>0</uid>", i2+"</user>", ind+"</system>", ind+"<interfaces>")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("%s<opt%d>", i2, i+1)
		b.f("%s<descr><![CDATA[%s]]></descr>", i3, u.Desc)
		b.f("%s<if>vlan0.%d</if>", i3, u.VLAN)
		if !u.Shut {
			b.l(i3 + "<enable></enable>")
		}
		b.f("%s<ipaddr>%s</ipaddr>", i3, ip(u.Net, 1))
		b.l(i3 + "<subnet>24</subnet>")
		b.f("%s</opt%d>", i2, i+1)
	}
	b.l(ind+"</interfaces>", ind+"<staticroutes>")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.l(i2 + "<route>")
		b.f("%s<network>%s/24</network>", i3, u.Dest)
		b.f("%s<gateway>GW_OPT%d</gateway>", i3, i+1)
		b.l(i2 + "</route>")
	}
	b.l(ind+"</staticroutes>", ind+"<filter>")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.l(i2+"<rule>", i3+"<type>pass</type>")
		b.f("%s<interface>opt%d</interface>", i3, i+1)
		b.l(i3+"<protocol>tcp</protocol>", i3+"<destination>")
		b.f("%s<address>%s</address>", i4, u.Remote)
		b.f("%s<port>%d</port>", i4, u.Service)
		b.l(i3 + "</destination>")
		b.f("%s<descr><![CDATA[allow %s]]></descr>", i3, u.Desc)
		b.l(i2 + "</rule>")
	}
	b.l(ind+"</filter>", ind+"<revision>")
	// A save stamps the time and who saved from where; a save with no
	// change stamps them too.
	b.vol(func(v volatile) string { return fmt.Sprintf("%s<time>%d</time>", i2, v.ChangedAt.Unix()) })
	b.f("%s<description><![CDATA[%s@192.0.2.10 (Local Database): /system.php made changes]]></description>", i2, m.user)
	b.f("%s<username>%s@192.0.2.10 (Local Database)</username>", i2, m.user)
	b.l(ind+"</revision>", "</"+root+">")
	return b.d
}

// renderTNSR writes `show configuration running cli`.
func renderTNSR(m *model, n int) doc {
	var b builder
	b.l("configuration history enable", "", "nacm disable", "nacm read-default deny", "nacm write-default deny", "nacm exec-default deny",
		"nacm group admin", "    member root", "    member tnsr", "exit", "nacm enable", "")
	b.f("system name %s", m.host)
	b.l("", "auth user "+m.user)
	b.f("    password %s", m.sha512Crypt("user"))
	b.l("exit", "")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface GigabitEthernet0/%d/%d", u.Slot, u.Port)
		b.f("    description %s", u.Desc)
		if !u.Shut {
			b.l("    enable")
		}
		b.f("    ip address %s/24", ip(u.Net, 1))
		b.l("exit")
	}
	b.l("", "route table default", "    id 0")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("    route %s/24", u.Dest)
		b.f("        next-hop 0 via %s", ip(u.Net, 254))
		b.l("    exit")
	}
	b.l("exit", "", "acl WAN_IN")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("    rule %d", (i+1)*10)
		b.l("        action permit", "        ip-version ipv4", "        protocol tcp")
		b.f("        destination address %s/32", u.Remote)
		b.f("        destination port %d", u.Service)
		b.l("    exit")
	}
	b.l("exit", "", "snmp host disable", "")
	return b.d
}

// renderGaia writes clish `show configuration`; its header names the
// export time, which moves at every show.
func renderGaia(m *model, n int) doc {
	var b builder
	b.l("#")
	b.f("# Configuration of %s", m.host)
	b.l("# Language version: 15.0v1", "#")
	b.vol(func(v volatile) string {
		return fmt.Sprintf("# Exported by %s on %s", m.user, v.Now.UTC().Format("Mon Jan _2 15:04:05 2006"))
	})
	b.l("#", "set net-access telnet off", "set core-dump enable", "set clienv debug 0", "set clienv echo-cmd off", "set clienv output pretty",
		"set clienv prompt \"%M\"", "set clienv rows 0", "set dns primary 192.0.2.53")
	b.f("set hostname %s", m.host)
	b.l("set ntp active on", "set ntp server primary 192.0.2.123 version 4", "set timezone Etc / GMT")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("add interface eth%d vlan %d", 1+i%4, u.VLAN)
		b.f("set interface eth%d.%d comments \"%s\"", 1+i%4, u.VLAN, u.Desc)
		b.f("set interface eth%d.%d ipv4-address %s mask-length 24", 1+i%4, u.VLAN, ip(u.Net, 1))
		state := "on"
		if u.Shut {
			state = "off"
		}
		b.f("set interface eth%d.%d state %s", 1+i%4, u.VLAN, state)
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("set static-route %s/24 nexthop gateway address %s on", u.Dest, ip(u.Net, 254))
	}
	b.f("add user %s uid 0 homedir /home/%s", m.user, m.user)
	b.f("set user %s password-hash %s", m.user, m.sha512Crypt("user"))
	b.f("set user %s shell /etc/cli.sh", m.user)
	b.l("set snmp agent off")
	return b.d
}

// renderCumulusNVUE writes `nv config show -o commands`.
func renderCumulusNVUE(m *model, n int) doc {
	var b builder
	b.f("nv set system hostname %s", m.host)
	b.l("nv set system timezone Etc/UTC", "nv set service ntp mgmt server 192.0.2.123", "nv set router bgp autonomous-system 65001", "nv set router bgp enable on")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("nv set interface swp%d description '%s'", i+1, u.Desc)
		if u.Shut {
			b.f("nv set interface swp%d link state down", i+1)
		}
		if u.Routed {
			b.f("nv set interface swp%d ip address %s/24", i+1, ip(u.Net, 1))
		} else {
			b.f("nv set interface swp%d bridge domain br_default access %d", i+1, u.VLAN)
		}
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("nv set vrf default router static %s/24 via %s", u.Dest, ip(u.Net, 254))
	}
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f("nv set vrf default router bgp neighbor %s remote-as external", u.Remote)
	}
	b.f("nv set system aaa user %s hashed-password '%s'", m.user, m.sha512Crypt("user"))
	b.f("nv set system aaa user %s role system-admin", m.user)
	return b.d
}

// renderEdgeOS writes `show configuration commands`.
func renderEdgeOS(m *model, n int) doc {
	var b builder
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("set firewall name WAN_IN rule %d action accept", (i+1)*10)
		b.f("set firewall name WAN_IN rule %d destination address %s", (i+1)*10, u.Remote)
		b.f("set firewall name WAN_IN rule %d destination port %d", (i+1)*10, u.Service)
		b.f("set firewall name WAN_IN rule %d protocol tcp", (i+1)*10)
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("set interfaces ethernet eth1 vif %d address %s/24", u.VLAN, ip(u.Net, 1))
		b.f("set interfaces ethernet eth1 vif %d description '%s'", u.VLAN, u.Desc)
		if u.Shut {
			b.f("set interfaces ethernet eth1 vif %d disable", u.VLAN)
		}
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("set protocols static route %s/24 next-hop %s", u.Dest, ip(u.Net, 254))
	}
	b.l("set service gui http-port 80", "set service gui https-port 443", "set service ssh port 22")
	b.f("set system host-name %s", m.host)
	b.f("set system login user %s authentication encrypted-password '%s'", m.user, m.sha512Crypt("user"))
	b.f("set system login user %s level admin", m.user)
	b.l("set system ntp server 192.0.2.123", "set system time-zone UTC")
	return b.d
}

// renderOpengear writes `config -g config`: one "config.<path> <value>"
// line per setting.
func renderOpengear(m *model, n int) doc {
	var b builder
	b.l("config.interfaces.wan.address 192.0.2.20", "config.interfaces.wan.gateway 192.0.2.1", "config.interfaces.wan.mode static", "config.interfaces.wan.netmask 255.255.255.0")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		p := fmt.Sprintf("config.ports.port%d", i+1)
		b.f("%s.label %s", p, u.Desc)
		b.f("%s.mode portmanager", p)
		b.f("%s.speed %d", p, []int{9600, 19200, 38400, 115200}[u.Service%4])
		if u.Shut {
			b.f("%s.disabled on", p)
		}
		b.f("%s.ssh on", p)
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("config.routes.route%d.address %s", i/3+1, u.Dest)
		b.f("config.routes.route%d.gateway %s", i/3+1, ip(u.Net, 254))
		b.f("config.routes.route%d.netmask 255.255.255.0", i/3+1)
	}
	b.f("config.system.name %s", m.host)
	b.l("config.system.timezone UTC", "config.users.total 1")
	b.f("config.users.user1.username %s", m.user)
	b.f("config.users.user1.password %s", m.sha512Crypt("user"))
	b.l("config.users.user1.groups.group1 admin")
	return b.d
}

// renderTMOS writes `tmsh -q list` (auth, LTM pools and virtual
// servers, sys) and `tmsh -q list net route all`. Pool members carry the
// monitor state tmsh prints; it never changes on the simulator.
func renderTMOS(m *model, n int) map[string]doc {
	var list, routes builder
	list.l("auth password-policy { }", "auth user "+m.user+" {", "    description "+m.user)
	list.f("    encrypted-password %s", m.sha512Crypt("user"))
	list.l("    partition Common", "    partition-access {", "        all-partitions {", "            role admin", "        }", "    }", "    shell bash", "}")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		list.f("ltm pool pool_%d {", i+1)
		list.l("    members {")
		list.f("        %s:%d {", u.Remote, u.Service)
		list.f("            address %s", u.Remote)
		if u.Shut {
			list.l("            session user-disabled")
		}
		list.l("        }", "    }", "    monitor tcp", "}")
		list.f("ltm virtual vs_%d {", i+1)
		list.f("    description \"%s\"", u.Desc)
		list.f("    destination %s:%d", ip(u.Net, 10), u.Service)
		list.l("    ip-protocol tcp", "    mask 255.255.255.255")
		list.f("    pool pool_%d", i+1)
		list.l("    profiles {", "        tcp { }", "    }", "    source 0.0.0.0/0", "    translate-address enabled", "    translate-port enabled", "}")
	}
	list.l("sys global-settings {")
	list.f("    hostname %s", m.host)
	list.l("}", "sys ntp {", "    servers { 192.0.2.123 }", "    timezone UTC", "}")
	for i := 0; i < n; i += 12 {
		u := m.unit(i)
		routes.f("net route route_%d {", i/12+1)
		routes.f("    gw %s", ip(u.Net, 254))
		routes.l("    mtu 1500")
		routes.f("    network %s/24", u.Dest)
		routes.l("}")
	}
	if len(routes.d) == 0 {
		routes.l("")
	}
	return map[string]doc{"tmsh -q list": list.d, "tmsh -q list net route all": routes.d}
}
