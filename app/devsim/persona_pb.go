package devsim

import (
	"fmt"
	"strings"
)

// Netgear ProSAFE, Broadcom EFOS, Ubiquiti EdgeSwitch (FASTPATH), FS.com
// FSOS, Lenovo CNOS, TP-Link JetStream, Mellanox Onyx and Ruckus
// FastIron.

// fastpathErase wipes the FASTPATH pager (fastpathMore, "--More-- or
// (q)uit") after a key: a carriage return and blanks.
const fastpathErase = "\r                  \r"

// fastpath is the FASTPATH command line: "(name) >", "enable" with a
// "Password:" question, "(name) #", "(name) (Config)#", Cisco's caret
// error, "User:" on telnet.
func fastpath(platform, host string) Personality {
	p := cisco(platform, host)
	p.SSHVersion = "SSH-2.0-OpenSSH_7.9"
	p.Banner = ""
	p.MOTD = "\n"
	p.UserPrompt, p.EnablePrompt, p.ConfigPrompt = "({host}) >", "({host}) #", "({host}) (Config)#"
	p.EnablePasswordPrompt = "Password:"
	// Neither the refusal of a wrong enable password nor that of a wrong
	// login is in the vendor documentation or a recording: these two
	// texts are assumed (the collector only needs its failure words).
	p.EnableFailed = "Incorrect password!\n"
	p.ConfigEnter, p.ConfigEnterReply = []string{"configure"}, ""
	p.ConfigExit = []string{"exit", "end"}
	p.ExitCommands = []string{"quit", "logout"}
	p.PagingOff = []string{"terminal length 0"}
	p.Replies = map[string]string{"terminal length 0": ""}
	p.Pager, p.PagerErase, p.PageLines = fastpathMore, fastpathErase, 24
	p.ConfigCommands = []string{"show running-config", "show running-config all"}
	p.VersionCommands = []string{"show version", "show hardware"}
	p.InvalidInput = ciscoInvalid
	p.LoginUserPrompt, p.LoginPasswordPrompt, p.LoginFailed = "\nUser:", "Password:", "\nAccess denied\n\n"
	return p
}

// fastpathUptime is FASTPATH's uptime, moving at every show.
func fastpathUptime(v volatile) string {
	mins := 60*24*146 + 23*60 + v.Show
	return fmt.Sprintf("%d days %d hrs %d mins %d secs", mins/1440, mins%1440/60, mins%60, v.Show%60)
}

// renderFastpath writes the "show running-config" of EFOS and EdgeSwitch:
// a commented header with the version, the uptime and the clock, the VLAN
// database, then global and per-port settings, each port closed by
// "exit".
func renderFastpath(desc, version, clock string) func(m *model, n int) doc {
	return func(m *model, n int) doc {
		var b builder
		b.l("!Current Configuration:", "!")
		b.f("!System Description %q", desc)
		b.f("!System Software Version %q", version)
		b.vol(func(v volatile) string { return fmt.Sprintf("!System Up Time          %q", fastpathUptime(v)) })
		b.l("!Additional Packages     QOS,IPv6 Management,Routing")
		switch clock {
		case "system":
			b.vol(func(v volatile) string { return "!Current System Time: " + v.Now.UTC().Format("Jan _2 15:04:05 2006") })
		case "sntp":
			b.vol(func(v volatile) string {
				return "!Current SNTP Synchronized Time: " + v.Now.UTC().Format("Jan _2 15:04:05 2006") + " UTC"
			})
		}
		b.l("!")
		b.f("hostname %q", m.host)
		b.l("vlan database")
		var vlans []string
		for i := 0; i < n; i += 8 {
			vlans = append(vlans, fmt.Sprint(m.unit(i).VLAN))
		}
		for len(vlans) > 0 {
			k := min(16, len(vlans))
			b.f("vlan %s", strings.Join(vlans[:k], ","))
			vlans = vlans[k:]
		}
		b.l("exit", "", "configure")
		b.l("ip domain name \"example.net\"", "ip name server 192.0.2.53")
		b.f("username %q password %s level 15 encryption-type sha256 encrypted", m.user, m.secret("user", 64, hexDigits))
		b.f("username \"backup\" password %s level 1 encryption-type sha256 encrypted", m.secret("backup", 64, hexDigits))
		b.l("", "line console", "exit", "", "line telnet", "exit", "", "line ssh", "exit", "")
		b.l("spanning-tree mode rstp", "sntp client mode unicast", "sntp server \"192.0.2.123\"")
		b.f("snmp-server sysname %q", m.host)
		b.f("snmp-server community %q ro", m.secret("snmp", 12, base64Alphabet[:62]))
		for i := 0; i < n; i++ {
			u := m.unit(i)
			b.f("interface 0/%d", i+1)
			b.f("description %q", u.Desc)
			if u.Shut {
				b.l("shutdown")
			}
			b.f("vlan pvid %d", u.VLAN)
			b.f("vlan participation include %d", u.VLAN)
			b.l("exit", "", "")
		}
		for i := 0; i < n; i += 3 {
			u := m.unit(i)
			b.f("ip route %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
		}
		b.l("exit", "", "ip ssh server enable")
		return b.d
	}
}

func init() {
	// Broadcom EFOS: shaped on the BES-53248 recording (prompt without a
	// blank before ">"/"#", enable, the running-config header with uptime
	// and clock).
	efos := fastpath("broadcom_efos", "BES-53248")
	efos.UserPrompt, efos.EnablePrompt, efos.ConfigPrompt = "({host})>", "({host})#", "({host}) (Config)#"
	efos.MOTD = "\n******************************************************************************\n* Reference Configuration File                                               *\n******************************************************************************\n"
	addPersonality(efos, single(renderFastpath("EFOS, 3.12.0.1, Linux 5.4.2-c92ac1fd, 2016.05.00.06", "3.12.0.1", "system")),
		func(m *model) doc {
			var b builder
			b.l("Switch: 1", "", "System Description............................. EFOS, 3.12.0.1, Linux 5.4.2-c92ac1fd, 2016.05.00.06")
			b.l("Machine Type................................... BES-53248", "Software Version............................... 3.12.0.1")
			b.f("Serial Number.................................. %s", strings.ToUpper(m.secret("serial", 12, hexDigits)))
			return b.d
		})

	// Ubiquiti EdgeSwitch: written from Ubiquiti's EdgeSwitch CLI
	// Command Reference; no public capture. "(UBNT EdgeSwitch) >", the
	// header names the SNTP time.
	es := fastpath("ubiquiti_edgeswitch", "UBNT EdgeSwitch")
	es.SSHVersion = "SSH-2.0-OpenSSH_7.5"
	es.MOTD = "\nWelcome to EdgeSwitch\n\nBy logging in, accessing, or using the Ubiquiti product, you\nacknowledge that you have read and understood the Ubiquiti\nLicense Agreement (available in the Web UI at, by default,\nhttp://192.168.1.2) and agree to be bound by its terms.\n\n"
	addPersonality(es, single(renderFastpath("EdgeSwitch 24-Port Lite, 1.9.3.5274803, Linux 3.6.5-f4a26ed5", "1.9.3.5274803", "sntp")),
		func(m *model) doc {
			var b builder
			b.l("Switch: 1", "", "System Description............................. EdgeSwitch 24-Port Lite, 1.9.3.5274803, Linux 3.6.5-f4a26ed5")
			b.l("Machine Type................................... EdgeSwitch 24-Port Lite", "Software Version............................... 1.9.3.5274803")
			b.f("Serial Number.................................. %s", strings.ToUpper(m.secret("serial", 12, hexDigits)))
			return b.d
		})

	// Netgear ProSAFE: shaped on the GS752TPP recording (the screen
	// cleared before the prompt, "19sw011# " with a blank, the "SYSTEM
	// CONFIG FILE ::= BEGIN" header with the uptime). Logs in at ">"
	// when an enable password is set, as "quit" in the recording shows.
	ng := fastpath("netgear_prosafe", "GS752TPP")
	ng.MOTD = "\x1b[H\x1b[J"
	ng.UserPrompt, ng.EnablePrompt, ng.ConfigPrompt = "{host}> ", "{host}# ", "{host}(config)# "
	ng.ConfigEnter = []string{"configure"}
	ng.ConfigCommands = []string{"show running-config"}
	ng.VersionCommands = []string{"show version", "show bootvar"}
	addPersonality(ng, single(renderNetgear), func(m *model) doc {
		var b builder
		b.l("Loader Version   : 1.0.0.5", "Loader Date      : 2017-12-28 09:35:22 UTC", "Firmware Version : 6.0.10.14 (6.0.10.14)", "Firmware Date    : Jul 29 2022 - 23:52:55", "")
		b.f("SN               : %s", strings.ToUpper(m.secret("serial", 13, hexDigits)))
		return b.d
	})
}

// renderNetgear writes a Smart Managed Pro switch's running-config as
// the GS752TPP recording shows it.
func renderNetgear(m *model, n int) doc {
	var b builder
	b.l("SYSTEM CONFIG FILE ::= BEGIN", "! Model: GS752TPP",
		"! System Description: NETGEAR 48-Port Gigabit PoE+ Smart Managed Pro Switch with 4 SFP Ports (GS752TPP)",
		"! Firmware Version: 6.0.10.14 [Jul 29 2022 - 23:52:55]", "! Loader Version: 1.0.0.5 [2017-12-28 09:35:22 UTC]",
		"! Config Version: 0", "! Hardware Version: 2")
	b.f("! System Name: %s", m.host)
	b.vol(func(v volatile) string {
		mins := 60*24*123 + 21*60 + 50 + v.Show
		return fmt.Sprintf("! System Up Time: %d days, %d hours, %d mins, %d secs", mins/1440, mins%1440/60, mins%60, v.Show%60)
	})
	b.l("!", "!", "!")
	b.f("system name %q", m.host)
	b.l(`system location "Rack"`, "ip address 192.0.2.2 mask 255.255.255.0", "ip default-gateway 192.0.2.1")
	b.f("username %q secret encrypted %s", m.user, m.secret("user", 64, hexDigits))
	b.l("sntp 1 host time-a.netgear.com port 123 ver 4", "clock source sntp", "", "spanning-tree mst configuration", "")
	b.f("snmp community %q enable 0.0.0.0 mask 0.0.0.0 ro", m.secret("snmp", 12, base64Alphabet[:62]))
	b.l("", "!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface g%d", i+1)
		b.f(" description %q", u.Desc)
		if u.Shut {
			b.l(" shutdown")
		}
		b.f(" switchport hybrid pvid %d", u.VLAN)
		b.f(" switchport hybrid allowed vlan add %d untagged", u.VLAN)
		b.l(" switchport hybrid allowed vlan remove 1", "!")
	}
	b.l("!", "")
	return b.d
}

func init() {
	// FS.com FSOS: shaped on the S3400 recording ("FS-LAB-OXI#",
	// "Building configuration..." and three blank lines, "!version",
	// " --More-- " as Oxidized's model answers it). The answer to an
	// unknown command is not recorded: "% Unknown command." is assumed.
	fs := cisco("fs_os", "FS-S3400")
	fs.SSHVersion = "SSH-2.0-OpenSSH_7.4"
	fs.Banner, fs.MOTD = "", "\n"
	fs.ConfigPrompt = "{host}_config#"
	fs.ConfigEnterReply = ""
	fs.Replies = map[string]string{"terminal length 0": "", "terminal width 0": ""}
	fs.Pager, fs.PagerErase = " --More-- ", "\b\b\b\b\b\b\b\b\b\b          \b\b\b\b\b\b\b\b\b\b"
	fs.InvalidInput = "% Unknown command.\n"
	fs.EnableFailed = "% Bad password.\n"
	fs.LoginUserPrompt, fs.LoginFailed = "Username:", "% Login failed.\n"
	addPersonality(fs, single(renderFSOS), func(m *model) doc {
		var b builder
		b.l("Fiberstore Co., Limited Internetwork Operating System Software", "S3400-48T4SP Software, Version 2.0.2J Build 120538, RELEASE SOFTWARE")
		b.f("Serial num:%s, ID num:2000000", strings.ToUpper(m.secret("serial", 9, hexDigits)))
		return b.d
	})

	// Lenovo CNOS: written from Lenovo's CNOS Command Reference (NE2572,
	// CNOS 10.10); no public capture of a Lenovo switch. IOS-like:
	// "NE2572>", "enable", "NE2572#", "terminal length 0", Cisco's caret
	// error.
	cn := cisco("lenovo_cnos", "NE2572")
	cn.SSHVersion = "SSH-2.0-OpenSSH_7.4"
	cn.Banner, cn.MOTD = "", "\nLenovo Cloud Network Operating System\n\n"
	cn.ConfigEnterReply = "Enter configuration commands, one per line.  End with CNTL/Z.\n"
	cn.Replies = map[string]string{"terminal length 0": ""}
	cn.EnableFailed = "% Bad secret\n"
	cn.LoginUserPrompt, cn.LoginFailed = "{host} login: ", "\nLogin incorrect\n"
	addPersonality(cn, single(renderCNOS), func(m *model) doc {
		var b builder
		b.l("Lenovo Networking Operating System (NOS) Software", "Technical Assistance Center: http://www.lenovo.com", "Copyright (C) Lenovo, 2016. All rights reserved.", "", "Software:", "  Bootloader version: 10.10.1.0", "  System version: 10.10.1.0")
		b.f("Serial Number: %s", strings.ToUpper(m.secret("serial", 10, hexDigits)))
		return b.d
	})

	// TP-Link JetStream: shaped on the DS-P7001-08 recording (the prompt
	// redrawn after "\r", "#" separators, "end"); the pager text is the
	// one Oxidized's model answers. The answer to an unknown command is
	// not recorded: "Error: Bad command" is assumed.
	tp := cisco("tplink_jetstream", "T2600G-28TS")
	tp.SSHVersion = "SSH-2.0-dropbear"
	tp.Banner, tp.MOTD = "", "\n"
	tp.PromptPrefix = "\r\n\r"
	tp.ConfigEnterReply = ""
	tp.Replies = map[string]string{"terminal length 0": ""}
	tp.Pager, tp.PagerErase = "Press any key to continue (Q to quit)", "\r                                     \r"
	tp.InvalidInput = "Error: Bad command\n"
	tp.EnableFailed = "Error: Bad password.\n"
	tp.LoginUserPrompt, tp.LoginFailed = "User:", "Login invalid.\n"
	addPersonality(tp, single(renderTPLink), func(m *model) doc {
		var b builder
		b.l(" System Description   - JetStream 24-Port Gigabit L2+ Managed Switch with 4 SFP Slots")
		b.f(" System Name          - %s", m.host)
		b.l(" Hardware Version     - T2600G-28TS 3.0", " Software Version     - 3.0.6 Build 20200805 Rel.38843(s)")
		return b.d
	})

	// Mellanox Onyx: shaped on the Onyx 3.9 and 3.10 recordings ("
	// [standalone: master] >", keypad-mode escapes around the output,
	// the "lines 1-23" pager wiped with "\e[m\e[K\r\e[K", "## Generated
	// at" in the header). The error is MLNX-OS's '% Unrecognized command
	// "ib".' with its 'Type "?" for help.', as public session logs show.
	on := cisco("mellanox_onyx", "switch")
	on.SSHVersion = "SSH-2.0-OpenSSH_8.2"
	on.Banner = ""
	on.MOTD = "Last login: {time} from 127.0.0.1\n\nMellanox Switch\n\n"
	on.PromptPrefix = "\r"
	on.UserPrompt, on.EnablePrompt, on.ConfigPrompt = "{host} [standalone: master] > ", "{host} [standalone: master] # ", "{host} [standalone: master] (config) # "
	on.ConfigEnter, on.ConfigEnterReply = []string{"configure terminal"}, ""
	on.ConfigExit = []string{"exit"}
	on.PagingOff = []string{"no cli session paging enable"}
	on.Replies = map[string]string{"no cli session paging enable": ""}
	on.Pager, on.PagerErase = "\x1b[7mlines 1-23 ", "\x1b[m\x1b[K\r\x1b[K"
	on.InvalidInput = "% Unrecognized command \"{word}\".\nType \"?\" for help.\n"
	on.EnableFailed = "% Authentication failure\n"
	on.LoginUserPrompt, on.LoginFailed = "{host} login: ", "Login incorrect\n"
	on.Abbreviations = false
	addPersonality(on, single(renderOnyx), func(m *model) doc {
		var b builder
		b.l("Product name:      Onyx", "Product release:   3.9.2504", "Build ID:          #1-dev", "Target arch:       x86_64")
		b.vol(func(v volatile) string { return fmt.Sprintf("Uptime:            103d 15h %dm 24.640s", v.Show%60) })
		return b.d
	})

	// Ruckus FastIron: shaped on the ICX7150 recordings ("SSH@ICX7150-48P#",
	// "Current configuration:", "ver", "Invalid input -> word" / "Type ?
	// for a list"); the pager is FastIron 08.0's long form, wiped with
	// "\e[2K\e[1G" as recorded.
	ic := cisco("ruckus_fastiron", "ICX7150-48P")
	ic.SSHVersion = "SSH-2.0-RomSShell_5.40"
	ic.Banner, ic.MOTD = "", "\n"
	ic.UserPrompt, ic.EnablePrompt, ic.ConfigPrompt = "SSH@{host}>", "SSH@{host}#", "SSH@{host}(config)#"
	ic.ConfigEnterReply = ""
	ic.PagingOff = []string{"skip-page-display"}
	ic.Replies = map[string]string{"skip-page-display": "Disable page display mode\n"}
	ic.Pager, ic.PagerErase = "--More--, next page: Space, next line: Return key, quit: Control-c", "\x1b[2K\x1b[1G"
	ic.InvalidInput = "Invalid input -> {word}\nType ? for a list\n"
	ic.EnableFailed = "Error - Incorrect username or password.\n"
	ic.LoginUserPrompt, ic.LoginFailed = "User Name:", "\nError - Incorrect username or password.\n"
	addPersonality(ic, single(renderFastIron), func(m *model) doc {
		var b builder
		b.l("  Copyright (c) 2017 Ruckus Networks, Inc. All rights reserved.", "    UNIT 1: compiled on Oct 21 2020 at 02:22:14 labeled as SPS08095", "        SW: Version 08.0.95T211")
		b.f("      Serial  #:%s", strings.ToUpper(m.secret("serial", 11, hexDigits)))
		b.vol(func(v volatile) string {
			return fmt.Sprintf("STACKID 1  system uptime is 120 day(s) 3 hour(s) %d minute(s) 5 second(s)", v.Show%60)
		})
		return b.d
	})
}

// renderFSOS writes an S3400 running-config.
func renderFSOS(m *model, n int) doc {
	var b builder
	b.l("Building configuration...", "", "", "", "Current configuration:", "!", "!version 2.0.2J build 120538",
		"service timestamps log date", "service password-encryption", "!")
	b.f("hostname %s", m.host)
	b.l("!", "ip name-server 192.0.2.53", "!", "spanning-tree mode mstp", "!")
	b.f("username %s password 7 %s", m.user, m.secret("user", 20, hexDigits))
	b.f("username backup password 7 %s", m.secret("backup", 20, hexDigits))
	b.l("!", "interface Null0", "!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface GigaEthernet0/%d", i+1)
		b.f(" description %q", u.Desc)
		if u.Shut {
			b.l(" shutdown")
		}
		b.f(" switchport pvid %d", u.VLAN)
		b.l("!")
	}
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f(" name VLAN%d", u.VLAN)
		b.l("!")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("!")
	b.f("snmp-server community 7 %s RO", m.secret("snmp", 14, hexDigits))
	b.l("!", "ip sshd enable", "ip sshd version 2", "!", "ntp server 192.0.2.123 version 4", "!")
	return b.d
}

// renderCNOS writes a Lenovo CNOS running-config.
func renderCNOS(m *model, n int) doc {
	var b builder
	b.l("!", `version "10.10.1.0"`, "!")
	b.f("hostname %s", m.host)
	b.f("username %s role network-admin password encrypted %s", m.user, m.sha512Crypt("user"))
	b.f("username backup role network-operator password encrypted %s", m.sha512Crypt("backup"))
	b.l("!", "ntp server 192.0.2.123", "!")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f(" name VLAN%d", u.VLAN)
		b.l("!")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface Ethernet1/%d", i+1)
		b.f(" description %s", u.Desc)
		b.f(" switchport access vlan %d", u.VLAN)
		if u.Shut {
			b.l(" shutdown")
		}
		b.l("!")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s/24 %s", u.Dest, ip(u.Net, 254))
	}
	b.f("snmp-server community %s group network-operator", m.secret("snmp", 12, base64Alphabet[:62]))
	b.l("!", "line vty", " exec-timeout 60", "!", "end")
	return b.d
}

// renderTPLink writes a JetStream running-config as the DS-P7001-08
// recording shows it: "#" between sections.
func renderTPLink(m *model, n int) doc {
	var b builder
	b.l("!T2600G-28TS", "#")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f(" name \"VLAN%d\"", u.VLAN)
		b.l("#")
	}
	b.f("hostname %q", m.host)
	b.l(`location "Rack"`, "#", "system-time ntp UTC+00:00 192.0.2.123 192.0.2.124 12", "#")
	b.f("user name %s privilege admin secret 5 %s", m.user, m.secret("user", 32, hexDigits))
	b.l("no service reset-disable", "#", "ip ssh server", "#", "spanning-tree", "spanning-tree mode rstp", "#")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("#")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface gigabitEthernet 1/0/%d", i+1)
		b.f("  description %q", u.Desc)
		if u.Shut {
			b.l("  shutdown")
		}
		b.f("  switchport general allowed vlan %d untagged", u.VLAN)
		b.f("  switchport pvid %d", u.VLAN)
		b.l("#")
	}
	b.l("end")
	return b.d
}

// renderOnyx writes an Onyx running-config: "##" section comments, the
// generation time at the top, indented interface lines.
func renderOnyx(m *model, n int) doc {
	var b builder
	b.l("##")
	b.f("## Running database %q", "initial")
	b.vol(func(v volatile) string { return "## Generated at " + v.Now.UTC().Format("2006/01/02 15:04:05 -0700") })
	b.f("## Hostname: %s", m.host)
	b.l("## Product release: 3.9.2504", "##", "", "##", "## Running-config temporary prefix mode setting", "##", "no cli default prefix-modes enable", "")
	b.l("##", "## Interface Ethernet configuration", "##")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("   interface ethernet 1/%d description %s", i+1, u.Desc)
		b.f("   interface ethernet 1/%d switchport access vlan %d", i+1, u.VLAN)
		if u.Shut {
			b.f("   interface ethernet 1/%d shutdown", i+1)
		}
	}
	b.l("", "##", "## VLAN configuration", "##")
	for i := 0; i < n; i += 8 {
		b.f("   vlan %d", m.unit(i).VLAN)
	}
	b.l("", "##", "## Static route configuration", "##")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("   ip route vrf default %s /24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("", "##", "## Local user account configuration", "##")
	b.f("   username %s password 7 %s", m.user, m.sha512Crypt("user"))
	b.l("", "##", "## Network management configuration", "##")
	b.f("   hostname %s", m.host)
	b.l("   ntp server 192.0.2.123", "", "##", "## Persistent prefix mode setting", "##", "cli default prefix-modes enable")
	return b.d
}

// renderFastIron writes an ICX running-config.
func renderFastIron(m *model, n int) doc {
	var b builder
	b.l("Current configuration:", "!", "ver 08.0.95T211", "!", "stack unit 1", "  module 1 icx7150-48p-poe-port-management-module", "  module 2 icx7150-2-copper-port-2g-module", "!", "global-stp", "!")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d name VLAN%d by port", u.VLAN, u.VLAN)
		b.f(" untagged ethe 1/1/%d", u.Port)
		b.l(" spanning-tree", "!")
	}
	b.f("hostname %s", m.host)
	b.l("ip dns server-address 192.0.2.53", "!", "aaa authentication login default local", "!")
	b.f("username %s password 8 %s", m.user, m.secret("user", 40, base64Alphabet[:62]))
	b.f("username backup password 8 %s", m.secret("backup", 40, base64Alphabet[:62]))
	b.l("!")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s/24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface ethernet %d/1/%d", u.Slot, u.Port)
		b.f(" port-name %s", u.Desc)
		if u.Shut {
			b.l(" disable")
		}
		b.l("!")
	}
	b.l("end")
	return b.d
}
