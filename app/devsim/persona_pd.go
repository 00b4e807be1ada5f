package devsim

import (
	"fmt"
	"strings"
)

// Personalities of Nokia SR OS, Ciena SAOS, Huawei SmartAX, ZTE ZXROS,
// SonicWall SonicOS, WatchGuard Fireware and Extreme VOSS.
//
// Ciena SAOS 10 follows a session recorded on a real CN5171 (Oxidized's
// spec/model/data, testdata/recordings in app/collect/driver): banner,
// prompt, paging command and the shape of `show running config`. The
// others are written from the vendors' documented command lines (command
// references and configuration guides) and the facts Oxidized's models
// record about them; no public capture of them exists. Where a detail is
// not documented (an error text, a pager prompt) the comment says so.

func init() {
	// Nokia SR OS, classic CLI: written from the SR OS Classic CLI command
	// reference; no public capture. Paging off with `environment no
	// more`; `environment more false` (MD-CLI) and `/!classic-cli` are
	// unknown to a classic-only node and get its "Error: Bad command.".
	addPersonality(Personality{
		Platform:            "nokia_sros",
		DefaultHostname:     "PE1",
		SSHVersion:          "SSH-2.0-OpenSSH_3.5p1",
		MOTD:                "\n\nSR OS Software\nCopyright (c) Nokia 2023.  All Rights Reserved.\n\n",
		UserPrompt:          "A:{host}# ",
		EnablePrompt:        "A:{host}# ",
		ConfigPrompt:        "*A:{host}>config# ",
		ConfigEnter:         []string{"configure"},
		ConfigExit:          []string{"exit all"},
		ExitCommands:        []string{"logout"},
		PagingOff:           []string{"environment no more"},
		Replies:             map[string]string{"environment no more": ""},
		Pager:               "Press any key to continue (Q to quit)",
		PagerErase:          "\r                                     \r",
		PageLines:           24,
		ConfigCommands:      []string{"admin display-config"},
		VersionCommands:     []string{"show version", "show system information"},
		Abbreviations:       true,
		InvalidInput:        "{caret}\nError: Bad command.\n",
		LoginUserPrompt:     "\nLogin: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login incorrect\n",
	}, single(renderSROS), func(m *model) doc {
		var b builder
		b.l("TiMOS-C-23.10.R2 cpm/x86_64 Nokia 7750 SR Copyright (c) 2000-2023 Nokia.", "All rights reserved. All use subject to applicable license agreements.")
		return b.d
	})

	// Ciena SAOS 10, from the CN5171 recording. Its pager text is not in
	// the recording (paging was off); "--More--" is assumed, as is the
	// error text for an unknown command.
	addPersonality(Personality{
		Platform:            "ciena_saos",
		DefaultHostname:     "LAB-CN5171-1",
		SSHVersion:          "SSH-2.0-OpenSSH_8.4",
		MOTD:                "Last login: {time} from 127.0.0.1\n\nSAOS 10 - Service Aware Operating System\n\n",
		UserPrompt:          "{host}> ",
		EnablePrompt:        "{host}> ",
		ConfigPrompt:        "{host}(config)# ",
		ConfigEnter:         []string{"config"},
		ConfigExit:          []string{"exit", "end"},
		ExitCommands:        []string{"exit"},
		PagingOff:           []string{"set session more off"},
		Replies:             map[string]string{"set session more off": ""},
		Pager:               "--More--",
		PagerErase:          "\r        \r",
		PageLines:           24,
		ConfigCommands:      []string{"show running config"},
		VersionCommands:     []string{"show software", "show system components"},
		InvalidInput:        "{caret}\nError: unknown command \"{word}\"\n",
		LoginUserPrompt:     "{host} login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login incorrect\n",
	}, single(renderSAOS10), func(m *model) doc {
		var b builder
		b.l("+----------------------------------- SOFTWARE STATE -----------------------------------+",
			"| Running package version  | saos-10-09-02-0181-RS3                                    |",
			"+--------------------------+-----------------------------------------------------------+")
		return b.d
	})

	// Huawei SmartAX MA5800: written from the MA5800 command reference;
	// no public capture. Smart mode's "{ <cr>||<K> }:" parameter prompts
	// are not simulated: the driver turns smart mode off first.
	smartax := huawei("huawei_smartax", "MA5800-X7")
	smartax.SSHVersion = "SSH-2.0--"
	smartax.MOTD = "\n  Huawei Integrated Access Software (MA5800).\n  Copyright(C) Huawei Technologies Co., Ltd. 2002-2023. All rights reserved.\n\n" +
		"  -----------------------------------------------------------------------------\n  User last login information:\n" +
		"  -----------------------------------------------------------------------------\n  Access Type : SSH\n  IP-Address  : 127.0.0.1\n" +
		"  Login  Time : {time}+00:00\n  -----------------------------------------------------------------------------\n\n"
	smartax.UserPrompt, smartax.EnablePrompt, smartax.ConfigPrompt = "{host}>", "{host}#", "{host}(config)#"
	smartax.EnableCommand, smartax.EnablePasswordPrompt, smartax.EnableReply = "enable", "Password:", ""
	smartax.EnableFailed = "  % Password error\n"
	smartax.ConfigEnter, smartax.ConfigEnterReply = []string{"config"}, ""
	smartax.ConfigExit = []string{"quit", "return"}
	smartax.ExitCommands = []string{"quit", "logout"}
	smartax.PagingOff = []string{"scroll"}
	smartax.Replies = map[string]string{"undo smart": "", "undo interactive": "", "infoswitch cli OFF": "", "scroll": ""}
	smartax.Pager = "  ---- More ( Press 'Q' to break ) ----"
	smartax.PagerErase = "\x1b[37D                                     \x1b[37D"
	smartax.PageLines = 25
	smartax.VersionCommands = []string{"display version"}
	smartax.InvalidInput = "{caret}\n  % Unknown command, the error locates at '^'\n"
	smartax.LoginUserPrompt, smartax.LoginPasswordPrompt = "\n>>User name:", ">>User password:"
	smartax.LoginFailed = "\n  Username or password invalid\n"
	addPersonality(smartax, single(renderSmartAX), func(m *model) doc {
		var b builder
		b.l("  VERSION : MA5800V100R019C10", "  PATCH   : SPH210", "  PRODUCT : MA5800-X7")
		return b.d
	})

	// ZTE ZXR10 (ZXROS): written from the ZXR10 command references; no
	// public capture. IOS-like enable, paging and errors.
	zx := cisco("zte_zxros", "ZXR10")
	zx.SSHVersion = "SSH-2.0-ZTE_SSH.2.0"
	zx.Banner, zx.MOTD = "", "\n"
	zx.Replies = map[string]string{"terminal length 0": ""}
	zx.PagingOff = []string{"terminal length 0"}
	zx.Pager, zx.PagerErase = " --More--", "\b\b\b\b\b\b\b\b\b         \b\b\b\b\b\b\b\b\b"
	zx.ConfigCommands = []string{"show running-config"}
	zx.VersionCommands = []string{"show version"}
	zx.InvalidInput = "{caret}\n%Error 20203: Invalid input detected at '^' marker.\n"
	zx.LoginUserPrompt = "\n************************************************\nWelcome to ZXR10 Carrier-Class High-end Router\n************************************************\nUsername:"
	zx.LoginPasswordPrompt = "Password:"
	zx.LoginFailed = "\n% Login failed\n"
	addPersonality(zx, single(renderZXROS), func(m *model) doc {
		var b builder
		b.l("ZTE ZXR10 Software, Version: V5.00.10, Release software", "Copyright (c) 2000-2023 by ZTE Corporation")
		return b.d
	})

	// SonicWall SonicOS 7: written from the SonicOS 7 CLI reference; no
	// public capture (Oxidized keeps only prompt examples). SSH only. The
	// pager prompt and the unknown-command text are assumed.
	addPersonality(Personality{
		Platform:        "sonicwall_sonicos",
		DefaultHostname: "C0EAE4123456",
		SSHVersion:      "SSH-2.0-SonicWall",
		MOTD:            "\n",
		UserPrompt:      "{user}@{host}> ",
		EnablePrompt:    "{user}@{host}> ",
		ConfigPrompt:    "config({host})# ",
		ConfigEnter:     []string{"configure", "configure terminal"},
		ConfigExit:      []string{"exit", "end"},
		ExitCommands:    []string{"exit"},
		PagingOff:       []string{"no cli pager session"},
		Replies:         map[string]string{"no cli pager session": ""},
		Pager:           "--MORE--",
		PagerErase:      "\r        \r",
		PageLines:       24,
		ConfigCommands:  []string{"show current-config"},
		VersionCommands: []string{"show version", "show status"},
		InvalidInput:    "% Unknown command: {word}\n",
		LoginUserPrompt: "User: ", LoginPasswordPrompt: "Password: ", LoginFailed: "Access denied\n",
	}, single(renderSonicOS), func(m *model) doc {
		var b builder
		b.l("firmware-version \"SonicOS 7.0.1-5145\"", "model \"TZ 370\"")
		return b.d
	})

	// WatchGuard Fireware: written from the Fireware CLI reference; no
	// public capture. Admin lands in "WG#". The CLI has no command to turn
	// paging off and `export config to console` is not paged (Oxidized
	// collects it without answering a pager), so none is simulated. The Logon
	// Disclaimer question is not simulated (the driver's answer to it is
	// proven on a scripted session in app/collect/driver).
	addPersonality(Personality{
		Platform:        "watchguard_fireware",
		DefaultHostname: "WG",
		SSHVersion:      "SSH-2.0-OpenSSH_7.4",
		MOTD:            "--\n-- WatchGuard Fireware OS Version 12.10.3\n-- Support: https://www.watchguard.com/support\n--\n",
		UserPrompt:      "{host}#",
		EnablePrompt:    "{host}#",
		ConfigPrompt:    "{host}(config)#",
		ConfigEnter:     []string{"configure"},
		ConfigExit:      []string{"exit"},
		ExitCommands:    []string{"exit"},
		ConfigCommands:  []string{"export config to console"},
		VersionCommands: []string{"show sysinfo"},
		InvalidInput:    "% Invalid input detected at '^' marker.\n",
		LoginUserPrompt: "login: ", LoginPasswordPrompt: "Password: ", LoginFailed: "Login incorrect\n",
	}, single(renderFireware), func(m *model) doc {
		var b builder
		b.l("version : 12.10.3.B705031", "model   : T40")
		return b.d
	})

	// Extreme VOSS: written from the VOSS command reference; no public
	// capture. `enable` asks no password on VOSS (the login's access
	// level decides); the simulator's enable step always asks one, which
	// the driver answers when it has one.
	voss := cisco("extreme_voss", "VSP-8284")
	voss.SSHVersion = "SSH-2.0-OpenSSH_7.5"
	voss.Banner = ""
	voss.MOTD = "\n\n*****************************************************************\n* Extreme Networks Virtual Services Platform 8284XSQ           *\n* VOSS Software Release 8.10.0.0                                *\n*****************************************************************\n\n"
	voss.UserPrompt, voss.EnablePrompt, voss.ConfigPrompt = "{host}:1>", "{host}:1#", "{host}:1(config)#"
	voss.EnableReply, voss.EnableFailed = "", "% Access denied\n"
	voss.PagingOff = []string{"terminal more disable"}
	voss.Replies = map[string]string{"terminal more disable": ""}
	voss.Pager = "----More (q=Quit, space/return=Continue, ^P=Toggle on/off)----"
	voss.PagerErase = "\r" + strings.Repeat(" ", 64) + "\r"
	voss.ConfigCommands = []string{"show running-config"}
	voss.VersionCommands = []string{"show sys-info"}
	voss.InvalidInput = "{caret}\n% Invalid input detected at '^' marker.\n"
	voss.LoginUserPrompt, voss.LoginPasswordPrompt, voss.LoginFailed = "Login: ", "Password: ", "Login incorrect\n"
	addPersonality(voss, single(renderVOSS), func(m *model) doc {
		var b builder
		b.l("General Info :", "", "	SysDescr     : VSP-8284XSQ (8.10.0.0)")
		b.f("	SysName      : %s", m.host)
		return b.d
	})
}

// renderSROS writes classic `admin display-config`: a header with the
// release and the time the listing was generated, then the configure tree.
func renderSROS(m *model, n int) doc {
	var b builder
	stamp := func(v volatile) string { return strings.ToUpper(v.Now.UTC().Format("Mon Jan 02 15:04:05 2006 MST")) }
	b.l("# TiMOS-C-23.10.R2 cpm/x86_64 Nokia 7750 SR Copyright (c) 2000-2023 Nokia.",
		"# All rights reserved. All use subject to applicable license agreements.",
		"# Built on Wed Jan 31 10:00:00 PST 2024 by builder in /builds/c/2310B/R2/panos/main/sros",
		"# Configuration format version 23.10 revision 0", "")
	b.vol(func(v volatile) string { return "# Generated " + stamp(v) })
	b.l("", "exit all", "configure",
		"#--------------------------------------------------", "echo \"System Configuration\"",
		"#--------------------------------------------------", "    system")
	b.f("        name \"%s\"", m.host)
	b.l("        time", "            ntp", "                server 192.0.2.123", "                no shutdown", "            exit",
		"            zone UTC", "        exit", "        security", "            user \"admin\"")
	b.f("                password \"$2y$10$%s\"", m.secret("user", 53, cryptAlphabet))
	b.l("                access console", "                console", "                    member \"administrative\"", "                exit",
		"            exit", "        exit", "    exit",
		"#--------------------------------------------------", "echo \"Port Configuration\"",
		"#--------------------------------------------------")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("    port 1/%d/%d", u.Slot, u.Port)
		b.f("        description \"%s\"", u.Desc)
		b.l("        ethernet", "            mode hybrid", "            encap-type dot1q", "        exit")
		if u.Shut {
			b.l("        shutdown")
		} else {
			b.l("        no shutdown")
		}
		b.l("    exit")
	}
	b.l("#--------------------------------------------------", "echo \"Router (Network Side) Configuration\"",
		"#--------------------------------------------------", "    router Base")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f("        interface \"to-%d\"", u.VLAN)
		b.f("            address %s/24", ip(u.Net, 1))
		b.f("            port 1/%d/%d:%d", u.Slot, u.Port, u.VLAN)
		b.l("            no shutdown", "        exit")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("        static-route-entry %s/24", u.Dest)
		b.f("            next-hop %s", ip(u.Net, 254))
		b.l("                no shutdown", "            exit", "        exit")
	}
	b.l("    exit", "    filter", "        ip-filter 10 name \"10\" create")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("            entry %d create", (i+1)*10)
		b.l("                match protocol tcp")
		b.f("                    dst-ip %s/32", u.Remote)
		b.f("                    dst-port eq %d", u.Service)
		b.l("                exit", "                action forward", "            exit")
	}
	b.l("        exit", "    exit", "exit all", "")
	b.vol(func(v volatile) string { return "# Finished " + stamp(v) })
	return b.d
}

// renderSAOS10 writes `show running config` in the flat form the CN5171
// recording shows, with its trailing spaces and bare "exit" lines.
func renderSAOS10(m *model, n int) doc {
	var b builder
	b.l("components component \"5171\" config name \"5171\" ",
		"components component \"5171\" properties property \"base-mac\" config name \"base-mac\" ")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		p := fmt.Sprintf("%d/%d", u.Slot, u.Port)
		b.f("oc-if:interfaces interface \"%s\" config name \"%s\" description \"%s\" mtu 9216 ", p, p, u.Desc)
		if u.Shut {
			b.f("oc-if:interfaces interface \"%s\" config admin-status false ", p)
		}
	}
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f("classifiers classifier \"vlan_%d\" filter-entry \"classifier:vtag-stack\" vtags 1 vlan-id %d ", u.VLAN, u.VLAN)
		b.l("exit")
		b.f("fds fd \"fd-%d\" mode vpls ", u.VLAN)
		b.f("fps fp \"fp-%d_%d/%d\" fd-name \"fd-%d\" logical-port \"%d/%d\" classifier-list \"vlan_%d\" ",
			u.VLAN, u.Slot, u.Port, u.VLAN, u.Slot, u.Port, u.VLAN)
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("rib vrf \"default\" ipv4 \"%s/24\" next-hop \"%s\" ", u.Dest, ip(u.Net, 254))
		b.l("exit")
	}
	b.f("system config hostname \"%s\" description \"5171\" ", m.host)
	b.l("system aaa authentication config authentication-method \"AUTH_LOC\" ")
	b.f("system aaa authentication users user \"%s\" config password \"$6$%s\" role super ", m.user, m.secret("user", 60, cryptAlphabet))
	b.l("system ntp ", "exit", "exit")
	return b.d
}

// renderSmartAX writes `display current-configuration` of an MA5800.
func renderSmartAX(m *model, n int) doc {
	var b builder
	b.l("[MA5800V100R019: 8101]", "#", "[global-config]", "  <global-config>")
	b.f(" sysname %s", m.host)
	b.f(" terminal user name %s %s 3 1 3 ", m.user, m.secret("user", 24, base64Alphabet[:62]))
	b.l(" timezone GMT+ 00:00", "#", "[vlan-config]", "  <vlan-config>")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f(" vlan %d smart", u.VLAN)
		b.f(" vlan desc %d description \"%s\"", u.VLAN, u.Desc)
	}
	b.l("#", "[gpon]", "  <gpon>")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f(" ont-lineprofile gpon profile-id %d profile-name \"line-%d\"", u.VLAN, u.VLAN)
		b.l("  tcont 1 dba-profile-id 10")
		b.f("  gem add 1 eth tcont 1")
		b.f("  gem mapping 1 0 vlan %d", u.VLAN)
		b.l("  commit", "  quit")
	}
	// An ONT's serial number ("sn-auth") identifies it, printed on its
	// label: no secret.
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.l("#", "[gpon-0/1/"+fmt.Sprint(u.Slot-1)+"]")
		b.f("  <gpon-0/1/%d>", u.Slot-1)
		b.f(" interface gpon 0/1/%d", u.Slot-1)
		b.f(" ont add %d %d sn-auth \"48575443%s\" omci ont-lineprofile-id %d ont-srvprofile-id 10 desc \"%s\"",
			u.Slot-1, u.Port, strings.ToUpper(m.secret(fmt.Sprint("serial:ont", i), 8, hexDigits)), m.unit(i/4*4).VLAN, u.Desc)
		if u.Shut {
			b.f(" ont deactivate %d %d", u.Slot-1, u.Port)
		}
	}
	b.l("#", "[bbs-config]", "  <bbs-config>")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f(" service-port %d vlan %d gpon 0/1/%d ont %d gemport 1 multi-service user-vlan %d tag-transform translate",
			i, m.unit(i/4*4).VLAN, u.Slot-1, u.Port, u.VLAN)
	}
	b.l("#", "[ip-route]", "  <ip-route>")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f(" ip route-static %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("#", "[snmp]", "  <snmp>")
	b.f(" snmp-agent community read cipher %s", m.secret("snmp", 32, base64Alphabet[:62]))
	b.l("#", "return")
	return b.d
}

// renderZXROS writes ZXR10 `show running-config`: sections between
// "!<name>" and "!</name>" marks, "$" ending each block.
func renderZXROS(m *model, n int) doc {
	var b builder
	b.l("Building configuration...", "!<system-config>")
	b.f("hostname %s", m.host)
	b.l("!</system-config>", "!<user-config>")
	b.f("username %s password encrypted %s privilege 15", m.user, m.secret("user", 32, hexDigits))
	b.l("!</user-config>", "!<vlan>")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f("  name %s", strings.ReplaceAll(u.Desc, " ", "_"))
		b.l("$")
	}
	b.l("!</vlan>", "!<if-intf>")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface gei-0/%d/0/%d", u.Slot, u.Port)
		b.f("  description %s", u.Desc)
		if u.Shut {
			b.l("  shutdown")
		} else {
			b.l("  no shutdown")
		}
		b.l("$")
	}
	b.l("!</if-intf>", "!<ipv4-static-route>")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("!</ipv4-static-route>", "!<ipv4-acl>", "ipv4-access-list 3000")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("  rule %d permit tcp %s 0.0.0.255 %s 0.0.0.0 eq %d", (i+1)*10, ip(u.Net, 0), u.Remote, u.Service)
	}
	b.l("$", "!</ipv4-acl>", "!<snmp>")
	b.f("snmp-server community encrypted %s view AllView ro", m.secret("snmp", 32, hexDigits))
	b.l("!</snmp>", "end")
	return b.d
}

// renderSonicOS writes `show current-config`.
func renderSonicOS(m *model, n int) doc {
	var b builder
	b.l("administration")
	b.f("    firewall-name %s", m.host)
	b.l("    admin", "        name admin")
	b.f("        password hash 1,%s", m.secret("admin", 64, hexDigits))
	b.l("        exit", "    exit")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f("interface X%d:V%d", i/4%8, u.VLAN)
		b.f("    vlan %d", u.VLAN)
		b.l("    ip-assignment LAN static")
		b.f("        ip %s", ip(u.Net, 1))
		b.l("        netmask 255.255.255.0", "        exit")
		b.f("    comment \"%s\"", u.Desc)
		b.l("    exit")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("address-object ipv4 \"%s\"", u.Desc)
		b.f("    host %s", u.Remote)
		b.l("    zone LAN", "    exit")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("access-rule ipv4 from LAN to WAN action allow destination address name \"%s\" service name \"TCP-%d\"", u.Desc, u.Service)
		if u.Shut {
			b.l("    no enable")
		}
		b.l("    exit")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("routing policy ipv4 interface X1 metric 1 destination name \"%s/24\" gateway %s", u.Dest, ip(u.Net, 254))
	}
	return b.d
}

// renderFireware writes `export config to console`: the XML profile.
func renderFireware(m *model, n int) doc {
	var b builder
	b.l(`<?xml version="1.0"?>`, "<profile>", "  <for-version>12.10</for-version>", "  <base-model>T40</base-model>",
		"  <system-parameters>", "    <device-conf>")
	b.f("      <system-name>%s</system-name>", m.host)
	b.l("      <admin-user>")
	b.f("        <password>%s</password>", m.secret("admin", 40, hexDigits))
	b.l("      </admin-user>", "    </device-conf>", "  </system-parameters>", "  <interface-list>")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.l("    <interface>")
		b.f("      <name>vlan%d</name>", u.VLAN)
		b.f("      <description>%s</description>", u.Desc)
		b.f("      <ip>%s</ip>", ip(u.Net, 1))
		b.l("      <netmask>255.255.255.0</netmask>", "    </interface>")
	}
	b.l("  </interface-list>", "  <alias-list>")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.l("    <alias>")
		b.f("      <name>%s</name>", u.Desc)
		b.f("      <address>%s</address>", u.Remote)
		b.l("    </alias>")
	}
	b.l("  </alias-list>", "  <policy-list>")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.l("    <policy>")
		b.f("      <name>tcp-%d-%d</name>", u.Service, i)
		b.f("      <enabled>%t</enabled>", !u.Shut)
		b.f("      <to-alias>%s</to-alias>", u.Desc)
		b.l("    </policy>")
	}
	b.l("  </policy-list>", "  <route-list>")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("    <route><dest>%s/24</dest><gateway>%s</gateway></route>", u.Dest, ip(u.Net, 254))
	}
	b.l("  </route-list>", "</profile>")
	return b.d
}

// renderVOSS writes `show running-config`: a header whose date changes at
// every show, then the configuration.
func renderVOSS(m *model, n int) doc {
	var b builder
	b.l("Preparing to Display Configuration...", "#")
	b.vol(func(v volatile) string { return "# " + v.Now.UTC().Format("Mon Jan _2 15:04:05 2006 MST") })
	b.l("# box type             : VSP-8284XSQ", "# software version     : 8.10.0.0", "# cli mode             : ECLI", "#", "",
		"#", "# PORT CONFIGURATION - PHASE I", "#", "", "config terminal", "",
		"#", "# SYSTEM CONFIGURATION", "#", "")
	b.f("prompt \"%s\"", m.host)
	b.f("snmp-server name \"%s\"", m.host)
	b.f("username %s level rwa", m.user)
	b.l("", "#", "# VLAN CONFIGURATION", "#", "")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f("vlan create %d name \"%s\" type port-mstprstp 0", u.VLAN, u.Desc)
	}
	b.l("", "#", "# PORT CONFIGURATION - PHASE II", "#", "")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface GigabitEthernet %d/%d", u.Slot, u.Port)
		b.f("name \"%s\"", u.Desc)
		if u.Shut {
			b.l("shutdown")
		} else {
			b.l("no shutdown")
		}
		b.l("exit")
	}
	b.l("", "#", "# IP CONFIGURATION", "#", "")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s 255.255.255.0 %s weight 1", u.Dest, ip(u.Net, 254))
	}
	b.l("", "end")
	return b.d
}
