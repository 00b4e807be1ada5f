package devsim

import (
	"fmt"
	"strings"
)

// Cisco small-business switches, AireOS controllers, Firepower Threat
// Defense, Dell OS6 / PowerConnect / OS9, ArubaOS controllers and Aruba
// Instant.
//
// cisco_ftd, aruba_os and aruba_instant follow public captures of real
// devices (Oxidized's model test data, replayed in
// app/collect/driver/replay_pa_test.go): same prompts, banners and
// configuration shapes. The others are written from the vendors' CLI
// guides; no public capture of them exists.

// Pager prompts of these platforms.
const (
	// Cisco SG/CBS and Dell PowerConnect 55xx (Marvell).
	sbMore = "More: <space>,  Quit: q or CTRL+Z, One line: <return> "
	// FASTPATH-derived command lines: AireOS, Dell N-series.
	fastpathMore = "--More-- or (q)uit"
	// ArubaOS controllers and Instant.
	arubaMorePrompt = "--More-- (q) quit (u) pageup (/) search (n) repeat"
)

func eraseOf(pager string) string {
	return "\r" + strings.Repeat(" ", len(pager)) + "\r"
}

func init() {
	// Cisco SG350 / CBS350, written from the Cisco CBS 350 CLI guide; no
	// public capture. Without "ip ssh password-auth" the command line asks
	// for the credentials again after the SSH login.
	smb := cisco("cisco_smb", "switch")
	smb.SSHVersion = "SSH-2.0-OpenSSH_7.2"
	smb.Banner, smb.MOTD = "", "\n"
	smb.ShellLogin = true
	smb.LoginUserPrompt, smb.LoginPasswordPrompt = "\nUser Name:", "Password:"
	smb.LoginFailed = "\n% Authentication failed\n"
	smb.PagingOff = []string{"terminal datadump"}
	smb.Replies = map[string]string{"terminal datadump": "", "terminal width 0": ""}
	smb.Pager, smb.PagerErase = sbMore, eraseOf(sbMore)
	smb.InvalidInput = "{caret}\n% Unrecognized command\n"
	smb.EnableFailed = "% Incorrect password\n"
	smb.ConfigEnterReply = ""
	addPersonality(smb, single(renderSMB), versionSMB)

	// AireOS, written from the Cisco Wireless Controller Command Reference;
	// no public capture. Any SSH client gets in; the command line then
	// asks "User:" and "Password:". There is no enable level.
	addPersonality(Personality{
		Platform:            "cisco_wlc",
		DefaultHostname:     "Cisco Controller",
		SSHVersion:          "SSH-2.0-CISCO_WLC",
		UserPrompt:          "({host}) >",
		EnablePrompt:        "({host}) >",
		ConfigPrompt:        "({host}) config>",
		ShellLogin:          true,
		LoginUserPrompt:     "\n({host})\nUser: ",
		LoginPasswordPrompt: "Password:",
		LoginFailed:         "\nLogin incorrect.\n",
		ConfigEnter:         []string{"config"},
		ConfigExit:          []string{"exit", "end"},
		ExitCommands:        []string{"logout"},
		PagingOff:           []string{"config paging disable"},
		Replies:             map[string]string{"config paging disable": ""},
		Pager:               fastpathMore,
		PagerErase:          eraseOf(fastpathMore),
		PageLines:           24,
		ConfigCommands:      []string{"show run-config commands"},
		VersionCommands:     []string{"show sysinfo", "show inventory"},
		InvalidInput:        "\nIncorrect usage. Use the '?' or <TAB> key to list commands.\n\n",
	}, single(renderAireOS), versionAireOS)

	// FTD 7.4 on a Firepower 1010, after the public capture: the CLISH
	// ">" prompt, the FX-OS banner, the ASA-style configuration.
	addPersonality(Personality{
		Platform:        "cisco_ftd",
		DefaultHostname: "firepower",
		SSHVersion:      "SSH-2.0-OpenSSH_8.0",
		MOTD: "Last login: {time} from 127.0.0.1\n\nCopyright 2004-2024, Cisco and/or its affiliates. All rights reserved. \n" +
			"Cisco is a registered trademark of Cisco Systems, Inc. \nAll other trademarks are property of their respective owners.\n\n" +
			"Cisco Firepower Extensible Operating System (FX-OS) v2.14.1 (build 167)\nCisco Firepower 1010 Threat Defense v7.4.2 (build 172)\n\n",
		UserPrompt:   "> ",
		EnablePrompt: "> ",
		ConfigPrompt: "> ",
		ExitCommands: []string{"exit", "logout"},
		// No pager: the capture shows none and has no command to turn
		// one off, and Oxidized's model answers none.
		ConfigCommands:      []string{"show running-config all", "show running-config"},
		VersionCommands:     []string{"show version", "show version system", "show inventory"},
		InvalidInput:        "{caret}\n% Invalid input detected at '^' marker.\n",
		LoginUserPrompt:     "firepower login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login incorrect\n",
	}, single(renderFTD), versionFTD)

	// Dell N3000 (OS6), written from the Dell EMC Networking N-Series CLI
	// reference; no public capture.
	os6 := cisco("dell_os6", "console")
	os6.SSHVersion = "SSH-2.0-RomSShell_5.40"
	os6.Banner, os6.MOTD = "", "\n"
	os6.LoginUserPrompt, os6.LoginPasswordPrompt = "\nUser:", "Password:"
	os6.LoginFailed = "\n% Authentication failed.\n"
	os6.EnablePasswordPrompt = "Password:"
	os6.EnableFailed = "% Incorrect password\n"
	os6.ConfigEnterReply = ""
	os6.Pager, os6.PagerErase = fastpathMore, eraseOf(fastpathMore)
	os6.InvalidInput = "{caret}\n% Invalid input detected at '^' marker.\n\n"
	addPersonality(os6, single(renderOS6), versionDell)

	// PowerConnect 5548, written from the Dell PowerConnect 55xx CLI
	// reference guide; no public capture. It knows "terminal datadump"
	// but not "terminal length".
	pc := cisco("dell_powerconnect", "console")
	pc.SSHVersion = "SSH-2.0-OpenSSH_5.2"
	pc.Banner, pc.MOTD = "", "\n"
	pc.LoginUserPrompt, pc.LoginPasswordPrompt = "\nUser Name:", "Password:"
	pc.LoginFailed = "\n% Authentication failed\n"
	pc.ConfigEnterReply = ""
	pc.PagingOff = []string{"terminal datadump"}
	pc.Replies = map[string]string{"terminal datadump": ""}
	pc.Pager, pc.PagerErase = sbMore, eraseOf(sbMore)
	pc.InvalidInput = "{caret}\n% Unrecognized command\n"
	pc.EnableFailed = "% Incorrect password\n"
	addPersonality(pc, single(renderPowerConnect), versionDell)

	// OS9 (FTOS 9.14), written from the Dell EMC Networking OS9 CLI
	// reference; no public capture.
	os9 := cisco("dell_os9", "Dell")
	os9.SSHVersion = "SSH-2.0-OpenSSH_6.5"
	os9.Banner, os9.MOTD = "", "\n"
	os9.ConfigPrompt = "{host}(conf)#"
	os9.LoginUserPrompt, os9.LoginPasswordPrompt = "Login: ", "Password: "
	os9.LoginFailed = "% Login incorrect\n"
	os9.ConfigEnterReply = ""
	os9.InvalidInput = "{caret}\n% Error: Invalid input at \"^\" marker.\n"
	os9.EnableFailed = "% Error: Bad passwords\n"
	addPersonality(os9, single(renderOS9), versionDell)

	// ArubaOS 8 on a 7210, after the public capture: "(host) [mynode] #"
	// prompts, replies that begin with a carriage return, "User:" on
	// telnet.
	aos := cisco("aruba_os", "Aruba7210")
	aos.SSHVersion = "SSH-2.0-OpenSSH_7.4"
	aos.Banner, aos.MOTD = "", "\n"
	aos.UserPrompt, aos.EnablePrompt, aos.ConfigPrompt = "({host}) [mynode] >", "({host}) [mynode] #", "({host}) [mynode] (config) #"
	aos.PromptPrefix = "\r"
	aos.LoginUserPrompt, aos.LoginPasswordPrompt = "\nUser: ", "Password:"
	aos.LoginFailed = "\nAccess denied\n"
	aos.EnablePasswordPrompt = "Password:"
	aos.EnableFailed = "Incorrect password\n"
	aos.ConfigEnterReply = "Enter Configuration commands, one per line. End with CNTL/Z\n\n"
	aos.PagingOff = []string{"no paging"}
	aos.Replies = map[string]string{"no paging": "", "encrypt disable": ""}
	aos.Pager, aos.PagerErase = arubaMorePrompt, eraseOf(arubaMorePrompt)
	aos.ConfigCommands = []string{"show running-config", "show configuration"}
	aos.VersionCommands = []string{"show version", "show inventory", "show slots"}
	aos.InvalidInput = "{caret}\n% Invalid input detected at '^' marker.\n\n"
	addPersonality(aos, single(renderArubaOS), versionArubaOS)

	// Instant 8.10 on an AP-515, after the public capture: "name# "
	// prompts and a tip before the first one.
	iap := cisco("aruba_instant", "AP-515")
	iap.SSHVersion = "SSH-2.0-OpenSSH_7.4"
	iap.Banner = ""
	iap.MOTD = "\nshow tech-support and show tech-support supplemental are the two most useful outputs to collect for any kind of troubleshooting session.\n\n"
	iap.UserPrompt, iap.EnablePrompt, iap.ConfigPrompt = "{host}> ", "{host}# ", "{host} (config) # "
	iap.LoginUserPrompt, iap.LoginPasswordPrompt = "User: ", "Password: "
	iap.LoginFailed = "\nAccess denied\n"
	iap.EnablePasswordPrompt = "Password:"
	iap.ConfigEnterReply = ""
	iap.PagingOff = []string{"no paging"}
	iap.Replies = map[string]string{"no paging": ""}
	iap.Pager, iap.PagerErase = arubaMorePrompt, eraseOf(arubaMorePrompt)
	iap.ConfigCommands = []string{"show running-config no-encrypt", "show running-config"}
	iap.VersionCommands = []string{"show version", "show activate status", "show aps"}
	iap.InvalidInput = "{caret}\n% Invalid input detected at '^' marker.\n\n"
	addPersonality(iap, single(renderInstant), versionInstant)
}

// renderSMB writes a Cisco SG350 / CBS350 running configuration.
func renderSMB(m *model, n int) doc {
	var b builder
	b.l("config-file-header")
	b.l(m.host)
	b.l("v3.2.1.1 / RCBS3.2_950_871_008", "CLI v1.0", "file SSD indicator encrypted", "@")
	b.l("ssd-control-start", "ssd config", "ssd file passphrase control unrestricted", "no ssd file integrity control")
	b.f("ssd-control-end %s", m.secret("ssd", 32, hexDigits))
	b.l("!", "!", "unit-type-control-start", "unit-type unit 1 network gi uplink te", "unit-type-control-end", "!")
	var vlans []string
	for i := 0; i < n; i += 8 {
		vlans = append(vlans, fmt.Sprint(m.unit(i).VLAN))
	}
	b.l("vlan database")
	b.f("vlan %s ", strings.Join(vlans, ","))
	b.l("exit")
	b.l("voice vlan oui-table add 0001e3 Siemens_AG_phone", "voice vlan oui-table add 00036b Cisco_phone")
	b.f("hostname %s", m.host)
	b.f("username %s password encrypted %s privilege 15", m.user, m.secret("user", 40, hexDigits))
	b.f("username backup password encrypted %s privilege 15", m.secret("backup", 40, hexDigits))
	b.f("encrypted radius-server key %s", m.secret("radius", 44, base64Alphabet))
	b.f("snmp-server community %s ro view Default", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.l("ip ssh server", "clock timezone UTC 0", "sntp server 192.0.2.123 poll", "!")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("interface vlan %d", u.VLAN)
		b.f(" name VLAN%d", u.VLAN)
		b.f(" ip address %s 255.255.255.0", ip(u.Net, 1))
		b.l("!")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface GigabitEthernet1/0/%d", i+1)
		b.f(" description \"%s\"", u.Desc)
		if u.Shut {
			b.l(" shutdown")
		}
		b.f(" switchport access vlan %d", u.VLAN)
		b.l("!")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s /24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("exit")
	return b.d
}

func versionSMB(m *model) doc {
	var b builder
	b.l("Active-image: flash://system/images/image_tesla_Sx250-350_Sx350X-550X_2.5.8.15.bin", "  Version: 3.2.1.1", "  MD5 Digest: 0fd7e1dc56c9f1b7b6ef1c7e35b6a37c", "  Date: 28-Jun-2022", "  Time: 21:17:55")
	return b.d
}

// renderAireOS writes `show run-config commands`. The rogue access points
// the controller hears are listed too, and change between two shows.
func renderAireOS(m *model, n int) doc {
	var b builder
	b.f("config sysname %s", m.host)
	b.f("config prompt \"%s\"", m.host)
	b.l("config location \"DC1\"", "config country US", "config time ntp server 1 192.0.2.123")
	b.f("config mgmtuser add %s **** read-write \"\"", m.user)
	b.l("config network telnet enable", "config network ssh enable", "config network webmode disable")
	b.f("config radius auth add 1 192.0.2.10 1812 ascii %s", m.secret("radius", 16, cryptAlphabet[2:]))
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		name := fmt.Sprintf("vlan%d", u.VLAN)
		b.f("config interface create %s %d", name, u.VLAN)
		b.f("config interface address dynamic-interface %s %s 255.255.255.0 %s", name, ip(u.Net, 2), ip(u.Net, 1))
		b.f("config interface dhcp dynamic-interface %s primary 192.0.2.53", name)
	}
	for i := 0; i < n; i += 2 {
		u := m.unit(i)
		id := i/2 + 1
		b.f("config wlan create %d %s %s", id, u.Desc, u.Desc)
		b.f("config wlan interface %d vlan%d", id, m.unit(i/4*4).VLAN)
		b.f("config wlan security wpa akm psk set-key ascii %s %d", m.secret(fmt.Sprint("psk", i), 20, cryptAlphabet[2:]), id)
		if u.Shut {
			b.f("config wlan disable %d", id)
		} else {
			b.f("config wlan enable %d", id)
		}
	}
	b.l("config rogue ap timeout 1200")
	mac := func(v volatile) string {
		return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", v.R.IntN(256), v.R.IntN(256), v.R.IntN(256), v.R.IntN(256), v.R.IntN(256), v.R.IntN(256))
	}
	b.vol(func(v volatile) string { return "config rogue adhoc alert " + mac(v) })
	b.vol(func(v volatile) string { return "config rogue client alert " + mac(v) })
	b.l("config snmp community delete public")
	b.f("config snmp community create %s", m.secret("snmp", 12, cryptAlphabet[2:]))
	return b.d
}

func versionAireOS(m *model) doc {
	var b builder
	b.l("Manufacturer's Name.............................. Cisco Systems Inc.", "Product Name..................................... Cisco Controller", "Product Version.................................. 8.10.196.0")
	b.f("System Name...................................... %s", m.host)
	return b.d
}

// renderFTD writes `show running-config all` as FTD 7.4 prints it.
func renderFTD(m *model, n int) doc {
	var b builder
	serial := "JAD2" + strings.ToUpper(m.secret("serial", 7, hexDigits))
	b.l(": Saved", "", ": ")
	b.f(": Serial Number: %s", serial)
	b.l(": Hardware:   FPR-1010, 2581 MB RAM, CPU Atom C3000 series 2200 MHz, 1 CPU (4 cores)", ":", "NGFW Version 7.4.2 ", "!")
	b.l("command-alias exec h help", "command-alias exec lo logout", "command-alias exec p ping", "command-alias exec s show", "terminal width 80")
	b.f("hostname %s", m.host)
	b.l("enable password ***** encrypted", "no asp load-balance per-packet", "!")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f("interface Ethernet1/%d", i/4+1)
		b.f(" description %s", u.Desc)
		b.l(" no switchport")
		b.f(" nameif zone%d", i/4)
		b.l(" no cts manual")
		b.f(" security-level %d", 100-i%100)
		b.l(" vrf forwarding default")
		b.f(" ip address %s 255.255.255.0 ", ip(u.Net, 1))
		if u.Shut {
			b.l(" shutdown")
		}
		b.l(" delay 10", "!")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("object network h-%s", u.Remote)
		b.f(" host %s", u.Remote)
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("access-list CSM_FW_ACL_ advanced permit tcp %s 255.255.255.0 object h-%s eq %d rule-id %d", ip(u.Net, 0), u.Remote, u.Service, 268434433+i)
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("route zone%d %s 255.255.255.0 %s 1", i/4%((n+3)/4), u.Dest, ip(u.Net, 254))
	}
	b.l("snort preserve-connection", "snort multichannel-lb enable", "no dp-tcp-proxy")
	// The checksum follows the configuration: stable between two shows.
	// It is a digest, no secret: drawn as m.secret draws (the same value)
	// but not counted among the configuration's secrets.
	checksum := randString(m.rng("secret:"+fmt.Sprint("checksum", n, len(m.edits)), 0), 32, hexDigits)
	b.f("Cryptochecksum:%s", checksum)
	b.l(": end")
	return b.d
}

func versionFTD(m *model) doc {
	var b builder
	b.f("-------------------[ %s ]--------------------", m.host)
	b.l("Model                     : Cisco Firepower 1010 Threat Defense (78) Version 7.4.2 (Build 172)", "----------------------------------------------------")
	return b.d
}

// renderOS6 writes a Dell N-series running configuration.
func renderOS6(m *model, n int) doc {
	var b builder
	b.l("!Current Configuration:", "!System Description \"Dell EMC Networking N3048EP-ON, 6.7.1.21, Linux 4.14.174\"", "!System Software Version 6.7.1.21", "!Cut-through mode is configured as disabled", "!", "configure")
	var vlans []string
	for i := 0; i < n; i += 8 {
		vlans = append(vlans, fmt.Sprint(m.unit(i).VLAN))
	}
	b.f("vlan %s", strings.Join(vlans, ","))
	b.l("exit")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f("name \"VLAN%d\"", u.VLAN)
		b.l("exit")
	}
	b.f("hostname \"%s\"", m.host)
	b.l("slot 1/0 10    ! Dell EMC Networking N3048EP-ON", "stack", "member 1 9    ! N3048EP-ON", "exit")
	b.l("sntp server 192.0.2.123", "clock timezone 0 minutes 0 zone \"UTC\"")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("interface vlan %d", u.VLAN)
		b.f("ip address %s 255.255.255.0", ip(u.Net, 1))
		b.l("exit")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.f("username \"%s\" password %s privilege 15 encrypted", m.user, m.secret("user", 128, hexDigits))
	b.f("snmp-server community \"%s\" ro", m.secret("snmp", 12, cryptAlphabet[2:]))
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.l("!")
		b.f("interface Gi1/0/%d", i+1)
		b.f("description \"%s\"", u.Desc)
		if u.Shut {
			b.l("shutdown")
		}
		b.f("switchport access vlan %d", u.VLAN)
		b.l("exit")
	}
	b.l("enable password "+m.secret("enable", 128, hexDigits)+" encrypted", "exit")
	return b.d
}

// renderPowerConnect writes a PowerConnect 5548 running configuration. An
// sFlow receiver set up by a management station counts its lease down.
func renderPowerConnect(m *model, n int) doc {
	var b builder
	b.l("spanning-tree mode rstp")
	var vlans []string
	for i := 0; i < n; i += 8 {
		vlans = append(vlans, fmt.Sprint(m.unit(i).VLAN))
	}
	b.l("vlan database")
	b.f("vlan %s", strings.Join(vlans, ","))
	b.l("exit")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface gigabitethernet1/0/%d", i+1)
		b.f("description \"%s\"", u.Desc)
		if u.Shut {
			b.l("shutdown")
		}
		b.f("switchport access vlan %d", u.VLAN)
		b.l("exit")
	}
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("interface vlan %d", u.VLAN)
		b.f("name VLAN%d", u.VLAN)
		b.f("ip address %s 255.255.255.0", ip(u.Net, 1))
		b.l("exit")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.f("hostname %s", m.host)
	b.f("username %s password encrypted %s privilege 15", m.user, m.secret("user", 40, hexDigits))
	b.f("snmp-server community %s ro view Default", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.l("sflow receiver 1 192.0.2.50")
	b.vol(func(v volatile) string {
		return fmt.Sprintf("sflow 1 destination owner 1 timeout %d", 86400-v.Show*7)
	})
	b.l("sntp server 192.0.2.123 poll", "clock source sntp", "ip ssh server")
	return b.d
}

// renderOS9 writes an OS9 (FTOS) running configuration: the header stamps
// the last change and the last save.
func renderOS9(m *model, n int) doc {
	var b builder
	stamp := func(t string) func(v volatile) string {
		return func(v volatile) string {
			return "! " + t + " at " + v.ChangedAt.UTC().Format("Mon Jan _2 15:04:05 2006") + " by " + m.user
		}
	}
	b.l("Current Configuration ...", "! Version 9.14(2.4)")
	b.vol(stamp("Last configuration change"))
	b.vol(stamp("Startup-config last updated"))
	b.l("!", "boot system stack-unit 1 primary system://A", "boot system stack-unit 1 secondary system://B", "!")
	b.f("hostname %s", m.host)
	b.l("!", "protocol lldp", "!", "redundancy auto-synchronize full", "!")
	b.f("enable password 7 %s", m.secret("enable", 16, hexDigits))
	b.f("username %s password 7 %s privilege 15", m.user, m.secret("user", 16, hexDigits))
	b.l("!", "stack-unit 1 provision S4048-ON", "!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface TenGigabitEthernet 1/%d", i+1)
		b.f(" description %s", u.Desc)
		b.l(" no ip address", " switchport")
		if u.Shut {
			b.l(" shutdown")
		} else {
			b.l(" no shutdown")
		}
		b.l("!")
	}
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("interface Vlan %d", u.VLAN)
		b.f(" ip address %s/24", ip(u.Net, 1))
		b.l(" no shutdown", "!")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s/24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("!")
	b.f("snmp-server community %s ro", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.l("ntp server 192.0.2.123", "!", "line console 0", "line vty 0", "!", "end")
	return b.d
}

func versionDell(m *model) doc {
	var b builder
	switch m.platform {
	case "dell_os9":
		b.l("Dell Real Time Operating System Software", "Dell Operating System Version: 2.0", "Dell Application Software Version: 9.14(2.4)")
	case "dell_os6":
		b.l("System Description............................. Dell EMC Networking N3048EP-ON, 6.7.1.21", "Machine Type................................... Dell EMC Networking N3048EP-ON")
	default:
		b.l("SW version    1.0.0.27 ( date  25-Sep-2014 time  14:09:57 )", "Boot version    1.0.0.4 ( date  01-Dec-2012 time  10:49:55 )", "HW version    00.00.02")
	}
	return b.d
}

// renderArubaOS writes an ArubaOS 8 `show running-config` as the public
// capture shows it: a build line, then the configuration with trailing
// spaces after most statements.
func renderArubaOS(m *model, n int) doc {
	var b builder
	b.l("Building Configuration...", " ", "version 8.10")
	b.f("hostname \"%s\" ", m.host)
	b.l("clock timezone UTC 0 0 ", "!")
	b.f("mgmt-user %s root %s ", m.user, m.secret("user", 40, hexDigits))
	b.f("snmp-server community \"%s\" ", m.secret("snmp", 20, cryptAlphabet[2:]))
	b.l("!", "country US ", "change-config-node /", "!")
	b.l("aaa authentication-server radius \"radius1\" ", "host \"192.0.2.10\" ")
	b.f("key \"%s\" ", m.secret("radius", 20, cryptAlphabet[2:]))
	b.l("!")
	for i := 0; i < n; i += 4 {
		u := m.unit(i)
		b.f("vlan %d ", u.VLAN)
		b.f("interface vlan %d", u.VLAN)
		b.f("ip address %s 255.255.255.0 ", ip(u.Net, 1))
		b.l("!")
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("wlan ssid-profile \"%s\" ", u.Desc)
		b.f("essid \"%s\" ", u.Desc)
		b.f("wpa-passphrase \"%s\" ", m.secret(fmt.Sprint("psk", i), 20, cryptAlphabet[2:]))
		b.l("opmode wpa2-psk-aes ", "!")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s 255.255.255.0 %s ", u.Dest, ip(u.Net, 254))
	}
	b.l("", "", "end")
	return b.d
}

func versionArubaOS(m *model) doc {
	var b builder
	b.l("Aruba Operating System Software.", "ArubaOS (MODEL: Aruba7210), Version 8.10.0.7 LSR", "Website: http://www.arubanetworks.com")
	return b.d
}

// renderInstant writes `show running-config no-encrypt` of an Instant
// virtual controller, as the public capture shows it.
func renderInstant(m *model, n int) doc {
	var b builder
	b.l("version 8.10.0.0-8.10.0", "virtual-controller-country US")
	b.f("virtual-controller-key %s", m.secret("vckey", 30, cryptAlphabet[2:]))
	b.f("name %s", m.host)
	b.l("virtual-controller-ip 192.0.2.254", "terminal-access", "ntp-server 192.0.2.123", "clock timezone UTC 00 00", "rf-band all", "", "allow-new-aps", "")
	for i := 0; i < n; i += 4 {
		b.f("allowed-ap 54:d7:e3:%02x:%02x:%02x", i/65536%256, i/256%256, i%256)
	}
	b.l("")
	b.f("snmp-server community %s", m.secret("snmp", 30, cryptAlphabet[2:]))
	b.l("", "hash-mgmt-password")
	b.f("hash-mgmt-user %s password hash %s", m.user, m.secret("user", 64, hexDigits))
	b.l("")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("wlan access-rule %s", u.Desc)
		b.f(" index %d", i+1)
		b.f(" rule %s 255.255.255.0 match tcp %d %d permit", ip(u.Net, 0), u.Service, u.Service)
		b.l("")
		b.f("wlan ssid-profile %s", u.Desc)
		if u.Shut {
			b.l(" disable")
		} else {
			b.l(" enable")
		}
		b.f(" index %d", i)
		b.f(" essid %s", u.Desc)
		b.f(" wpa-passphrase %s", m.secret(fmt.Sprint("psk", i), 30, cryptAlphabet[2:]))
		b.l(" opmode wpa2-psk-aes")
		b.f(" vlan %d", u.VLAN)
		b.l("")
	}
	return b.d
}

func versionInstant(m *model) doc {
	var b builder
	b.l("Aruba Operating System Software.", "ArubaOS (MODEL: 515), Version 8.10.0.6 LSR", "Website: http://www.arubanetworks.com")
	return b.d
}
