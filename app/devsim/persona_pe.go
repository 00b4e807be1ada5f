package devsim

import (
	"fmt"
	"strings"
)

// Citrix NetScaler, A10 ACOS, Allied Telesis AlliedWare Plus, Eaton
// Network-M3 and Perle IOLAN.

// Citrix NetScaler (NSCLI): written from the NetScaler command reference
// and the facts netmiko's and Netshot's drivers rely on; no public
// capture. "> " prompt, " Done" after every command, "ERROR: "
// for errors, no enable. The pager text is the documented "--More--"
// form; no recording shows it.
func init() {
	addPersonality(Personality{
		Platform:            "citrix_netscaler",
		DefaultHostname:     "ns01",
		SSHVersion:          "SSH-2.0-OpenSSH_8.8",
		MOTD:                "Last login: {time} from 127.0.0.1\n Done\n",
		UserPrompt:          "> ",
		EnablePrompt:        "> ",
		ConfigPrompt:        "> ",
		ExitCommands:        []string{"exit", "quit"},
		PagingOff:           []string{"set cli mode -page OFF"},
		Replies:             map[string]string{"set cli mode -page OFF": " Done\n"},
		Pager:               " --More-- ",
		PagerErase:          "\r          \r",
		PageLines:           24,
		ConfigCommands:      []string{"show ns runningConfig", "show ns ns.conf"},
		VersionCommands:     []string{"show ns version", "show version"},
		InvalidInput:        "ERROR: No such command\n",
		LoginUserPrompt:     "login: ",
		LoginPasswordPrompt: "Password:",
		LoginFailed:         "Login incorrect\n",
	}, single(renderNetScaler), func(m *model) doc {
		var b builder
		b.l("\tNetScaler NS14.1: Build 25.56.nc, Date: Jun 20 2024, 08:20:07   (64-bit)", " Done")
		return b.d
	})
}

// shownSecret returns a generator of a secret the device prints anew at
// every show (a value encrypted with a fresh salt each time): the show's
// random text, which it keeps among the secrets the configuration holds
// (Device.Secrets) in place of the one it printed before, so that the
// list does not grow with every show. Show renders under the device's
// lock.
func (m *model) shownSecret() func(v volatile, n int, alphabet string) string {
	var last string
	return func(v volatile, n int, alphabet string) string {
		delete(m.issued, last)
		last = randString(v.R, n, alphabet)
		m.issued[last] = true
		return last
	}
}

func renderNetScaler(m *model, n int) doc {
	var b builder
	b.l("#NS14.1 Build 25.56")
	b.vol(func(v volatile) string {
		return "# Last modified by `save config`, " + v.ChangedAt.UTC().Format("Mon Jan  2 15:04:05 2006")
	})
	b.l("set ns config -IPAddress 192.0.2.10 -netmask 255.255.255.0")
	b.f("set ns hostName %s", m.host)
	b.l("enable ns feature LB CS SSL REWRITE RESPONDER", "enable ns mode FR L3 USNIP PMTUD")
	b.f("set system user nsroot %s -encrypted -hashmethod SHA512", m.secret("nsroot", 64, hexDigits))
	b.f("add system user %s %s -encrypted -hashmethod SHA512", m.user, m.secret("user", 64, hexDigits))
	b.f("bind system user %s superuser 100", m.user)
	b.l("add ntp server 192.0.2.123")
	b.f("set snmp community %s ALL", m.secret("snmp", 12, cryptAlphabet[12:]))
	// NetScaler encrypts these secrets anew at every show.
	rpc, ldap := m.shownSecret(), m.shownSecret()
	b.vol(func(v volatile) string {
		return "set ns rpcNode 192.0.2.10 -password " + rpc(v, 64, hexDigits) + " -encrypted -encryptmethod ENCMTHD_3 -kek -suffix 2024_06_20_08_20_07 -srcIP *"
	})
	b.vol(func(v volatile) string {
		return "add authentication ldapAction ldap-corp -serverIP 192.0.2.30 -ldapBase \"dc=example,dc=net\" -ldapBindDn svc-ns@example.net -ldapBindDnPassword " +
			ldap(v, 64, hexDigits) + " -encrypted -encryptmethod ENCMTHD_3 -kek -suffix 2024_06_20_08_20_07 -ldapLoginName sAMAccountName"
	})
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("add vlan %d -aliasName \"VLAN%d\"", u.VLAN, u.VLAN)
		b.f("add ns ip %s 255.255.255.0 -vServer DISABLED", ip(u.Net, 1))
		b.f("bind vlan %d -ifnum 1/%d", u.VLAN, u.Port)
		b.f("bind vlan %d -IPAddress %s 255.255.255.0", u.VLAN, ip(u.Net, 1))
	}
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("add server srv%d %s -comment \"%s\"", i, u.Remote, u.Desc)
		b.f("add service svc%d srv%d TCP %d -gslb NONE -maxClient 0", i, i, u.Service)
		if u.Shut {
			b.f("disable service svc%d", i)
		}
		b.f("add lb vserver vs%d TCP %s %d -persistenceType NONE", i, ip(u.Net, 10), u.Service)
		b.f("bind lb vserver vs%d svc%d", i, i)
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("add route %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.l(" Done")
	return b.d
}

// A10 ACOS: written from the ACOS CLI reference; no public capture.
func init() {
	p := cisco("a10_acos", "vThunder")
	p.SSHVersion = "SSH-2.0-OpenSSH_8.0"
	p.Banner = ""
	p.MOTD = "ACOS system is ready now.\n\n[type ? for help]\n\n"
	p.EnablePasswordPrompt = "Password:"
	p.EnableFailed = "% Invalid password\n"
	p.ConfigEnterReply = ""
	p.PagingOff = []string{"terminal length 0"}
	p.Replies = map[string]string{"terminal length 0": "", "terminal width 0": ""}
	p.Pager, p.PagerErase = "--MORE--", "\r        \r"
	p.ConfigCommands = []string{"show running-config all-partitions", "show running-config", "show startup-config"}
	p.VersionCommands = []string{"show version", "show bootimage"}
	p.InvalidInput = "{caret}\n% Unrecognized command.       Invalid input detected at '^' marker.\n\n"
	p.LoginUserPrompt, p.LoginPasswordPrompt, p.LoginFailed = "login: ", "Password: ", "Login incorrect\n"
	addPersonality(p, single(renderACOS), func(m *model) doc {
		var b builder
		b.l("Thunder Series Unified Application Service Gateway vThunder",
			"  Copyright 2007-2024 by A10 Networks, Inc.  All A10 Networks products are",
			"  protected by one or more of the following US patents:", "",
			"          64-bit Advanced Core OS (ACOS) version 5.2.1-p9, build 45 (Jan-10-2024,12:00)")
		b.f("          Serial Number: vTh%s", strings.ToUpper(m.secret("serial", 12, hexDigits)))
		return b.d
	})
}

func acosTime(t interface{ Format(string) string }) string {
	return t.Format("15:04:05 MST Mon Jan 2 2006")
}

func renderACOS(m *model, n int) doc {
	var b builder
	b.sizeLine("!Current configuration: %d bytes")
	b.vol(func(v volatile) string { return "!Configuration last updated at " + acosTime(v.ChangedAt.UTC()) })
	b.vol(func(v volatile) string { return "!Configuration last saved at " + acosTime(v.ChangedAt.UTC()) })
	b.l("!64-bit Advanced Core OS (ACOS) version 5.2.1-p9, build 45 (Jan-10-2024,12:00)", "!")
	b.l("terminal idle-timeout 15", "!", "ip dns primary 192.0.2.53", "!")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("vlan %d", u.VLAN)
		b.f("  tagged ethernet %d", u.Port)
		b.f("  router-interface ve %d", u.VLAN)
		b.l("!")
	}
	b.l("interface management", "  ip address 192.0.2.60 255.255.255.0", "  ip default-gateway 192.0.2.1", "!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface ethernet %d", i+1)
		b.f("  name \"%s\"", u.Desc)
		if u.Shut {
			b.l("  disable")
		} else {
			b.l("  enable")
		}
		b.l("!")
	}
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("interface ve %d", u.VLAN)
		b.f("  ip address %s 255.255.255.0", ip(u.Net, 1))
		b.l("!")
	}
	b.f("hostname %s", m.host)
	b.l("!")
	b.f("admin %s password encrypted %s", m.user, m.secret("admin", 64, base64Alphabet[:62]))
	b.l("  privilege write", "!")
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s /24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("slb server srv%d %s", i, u.Remote)
		b.l("  port 80 tcp", "!")
		b.f("slb service-group sg%d tcp", i)
		b.f("  member srv%d 80", i)
		b.l("!")
		b.f("slb virtual-server vs%d %s", i, ip(u.Net, 10))
		b.f("  port %d tcp", u.Service)
		b.f("    service-group sg%d", i)
		b.l("!")
	}
	b.f("snmp-server community read encrypted %s", m.secret("snmp", 44, base64Alphabet[:62]))
	b.l("!", "end")
	return b.d
}

// Allied Telesis AlliedWare Plus: written from the AlliedWare Plus
// command reference; no public capture.
func init() {
	p := cisco("alliedtelesis_awplus", "awplus")
	p.SSHVersion = "SSH-2.0-OpenSSH_9.3"
	p.Banner = ""
	p.MOTD = "\nAlliedWare Plus (TM) 5.5.3 02/07/24 11:09:05\n\n"
	p.PagingOff = []string{"terminal length 0"}
	p.Replies = map[string]string{"terminal length 0": ""}
	p.VersionCommands = []string{"show version", "show system"}
	p.LoginUserPrompt, p.LoginPasswordPrompt, p.LoginFailed = "{host} login: ", "Password: ", "\nLogin incorrect\n"
	addPersonality(p, single(renderAWPlus), func(m *model) doc {
		var b builder
		b.l("AlliedWare Plus (TM) 5.5.3 02/07/24 11:09:05", "", "Build name : x530-5.5.3-0.3.rel",
			"Build date : Wed Feb 7 11:09:05 NZDT 2024", "Build type : RELEASE")
		return b.d
	})
}

func renderAWPlus(m *model, n int) doc {
	var b builder
	b.l("!", "service password-encryption", "!")
	b.f("hostname %s", m.host)
	b.l("!", "no banner motd", "!")
	b.f("username manager privilege 15 password 8 $1$%s$%s", m.secret("mgr:salt", 8, cryptAlphabet), m.secret("mgr", 22, cryptAlphabet))
	b.f("username %s privilege 15 password 8 $1$%s$%s", m.user, m.secret("user:salt", 8, cryptAlphabet), m.secret("user", 22, cryptAlphabet))
	b.l("!", "ssh server allow-users manager", "service ssh", "!", "no service telnet", "!")
	b.f("snmp-server community %s", m.secret("snmp", 12, cryptAlphabet[2:]))
	b.l("!", "ntp server 192.0.2.123", "!", "vlan database")
	for i := 0; i < n; i += 8 {
		b.f(" vlan %d state enable", m.unit(i).VLAN)
	}
	b.l("!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("interface port%d.0.%d", u.Slot, u.Port)
		b.f(" description %s", u.Desc)
		b.l(" switchport", " switchport mode access")
		b.f(" switchport access vlan %d", u.VLAN)
		if u.Shut {
			b.l(" shutdown")
		}
		b.l("!")
	}
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("interface vlan%d", u.VLAN)
		b.f(" ip address %s/24", ip(u.Net, 1))
		b.l("!")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s/24 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("!", "line con 0", "line vty 0 4", "!", "end")
	return b.d
}

// Perle IOLAN SCG: prompts, the login greeting, "terminal length 0" and
// the shape of the running configuration (its "Building running-config"
// line, "version", "service" and "tty" lines and its end marker) follow
// the capture of a real SCG50 (testdata/recordings/perle_SCG50-RRU_6.2.G3
// in app/collect/driver). The pager, the error text and the telnet login
// are not in the capture: they are the Cisco-style ones.
func init() {
	p := cisco("perle_iolan", "IOLAN")
	p.SSHVersion = "SSH-2.0-OpenSSH_8.4"
	p.Banner = ""
	p.MOTD = "Welcome to {host} @ Line 2\n\n"
	p.UserPrompt, p.EnablePrompt, p.ConfigPrompt = "{host}#", "{host}#", "{host}(config)#"
	p.EnableCommand, p.ConfigNeedsPrivilege = "", false
	p.ConfigEnterReply = ""
	p.PagingOff = []string{"terminal length 0"}
	p.Replies = map[string]string{"terminal length 0": ""}
	p.ConfigCommands = []string{"show running-config"}
	p.VersionCommands = []string{"show version verbose", "show system hardware"}
	p.LoginUserPrompt, p.LoginFailed = "login: ", "Login incorrect\n"
	addPersonality(p, single(renderPerle), func(m *model) doc {
		var b builder
		b.l("Perle IOLAN SCG Series Console Server, Version 6.2.G3, (Sun Sep 22 18:59:34", "CEST 2024)")
		return b.d
	})
}

func renderPerle(m *model, n int) doc {
	var b builder
	b.l("Building running-config . . . ", "! ", "! ", "version 6.2.G3", "! ", "!")
	b.l("service sequence-numbers", "service timestamps log datetime localtime show-timezone", "!")
	b.f("hostname %s", m.host)
	b.l("!")
	b.f("username %s privilege admin password 8 %s", m.user, m.sha512Crypt("user"))
	b.l("!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("tty %d mode line", i+1)
		b.f("tty %d description %s", i+1, u.Desc)
		b.f("tty %d tcp-port %d", i+1, 10001+i)
	}
	b.l("!")
	for i := 0; i < n; i += 8 {
		u := m.unit(i)
		b.f("interface vlan%d", u.VLAN)
		b.f(" ip address %s 255.255.255.0", ip(u.Net, 1))
		b.l("!")
	}
	for i := 0; i < n; i += 3 {
		u := m.unit(i)
		b.f("ip route %s 255.255.255.0 %s", u.Dest, ip(u.Net, 254))
	}
	b.l("!", "! ***** END of configuration *****")
	return b.d
}

// Eaton Network-M3: SSH only, collected over exec requests like the
// capture of a real card (testdata/recordings/eatonnetwork_NetworkM3_2.2.0
// in app/collect/driver). The real card prints the export as one line of
// JSON; the simulator indents it so that the generator tests, which count
// changed lines, see a change as a few lines. The noise rules mask values
// inside a line and work on both forms. The interactive prompt is not in
// the capture and is not used by backupd.
func init() {
	addPersonality(Personality{
		Platform:            "eaton_network",
		DefaultHostname:     "ups-m3",
		SSHVersion:          "SSH-2.0-OpenSSH_8.9",
		UserPrompt:          "{user}@{host}> ",
		EnablePrompt:        "{user}@{host}> ",
		ConfigPrompt:        "{user}@{host}> ",
		ExitCommands:        []string{"logout", "exit"},
		ConfigCommands:      []string{"save_configuration -p backupd-export"},
		VersionCommands:     []string{"get_info"},
		InvalidInput:        "Unknown command: {word}\n",
		LoginUserPrompt:     "login: ",
		LoginPasswordPrompt: "Password: ",
		LoginFailed:         "Login incorrect\n",
		ExecLF:              true,
	}, single(renderEatonM3), func(m *model) doc {
		var b builder
		b.l("Product: Network-M3", "Firmware version: 2.2.0")
		return b.d
	})
}

func renderEatonM3(m *model, n int) doc {
	var b builder
	cyphered := func(indent string, key string, last bool) {
		comma := ","
		if last {
			comma = ""
		}
		value := m.shownSecret()
		b.vol(func(v volatile) string {
			return fmt.Sprintf(`%s"%s": {"plaintext": null, "cyphered": "%s"}%s`, indent, key, value(v, 44, base64Alphabet), comma)
		})
	}
	b.l("{")
	// The passphrase's check value and the secrets are encrypted with a
	// new salt at every export.
	passphrase := m.shownSecret()
	b.vol(func(v volatile) string { return `  "passphrase": "` + passphrase(v, 64, hexDigits) + `",` })
	b.l(`  "version": "1.0",`, `  "features": {`)
	b.l(`    "identification": {"data": {"version": "1.0", "dmeData": {"identification": {`)
	b.f(`      "name": "%s", "contact": "noc@example.net", "location": "DC1 rack %d"}}}},`, m.host, m.seed%40+1)
	b.l(`    "date": {"data": {"version": "3.0", "dmeData": {"ntp": {"settings": {"enabled": true, "fromDhcp": false, "servers": ["192.0.2.123", "", "", "", ""]}}, "timeZone": "UTC"}}},`)
	b.l(`    "smtp": {"data": {"version": "2.0", "dmeData": {"port": 25, "enabled": true, "server": "192.0.2.25", "requireAuth": true,`)
	b.l(`      "user": "ups",`)
	cyphered("      ", "password", true)
	b.l(`    }}},`)
	b.l(`    "snmp": {"data": {"version": "2.0", "dmeData": {"traps": {"receivers": [`)
	community := m.secret("snmp", 12, cryptAlphabet[12:])
	for i := 0; i < n; i++ {
		u := m.unit(i)
		comma := ","
		if i == n-1 {
			comma = ""
		}
		b.f(`      {"name": "%s", "host": "%s", "port": 162, "community": "%s", "protocol": 2, "user": "", "enabled": %v}%s`, u.Desc, u.Remote, community, !u.Shut, comma)
	}
	b.l(`    ]}}}},`)
	b.l(`    "userAndSessionManagement": {"data": {"version": "1.0", "settings": {"local": {"predefinedAccounts": [`)
	b.f(`      {"id": "0", "name": "%s", "enabled": true, "profile": "administrators",`, m.user)
	b.l(`        "attemptLogin": {"lastAttemptISO": "1970-02-11T08:29:43Z", "unsuccessfullTries": 0},`)
	b.f(`        "password": {"lastChangeISO": "2024-11-03T23:45:26Z", "history": ["%s"]}}`, m.secret("hist", 64, hexDigits))
	b.l(`    ]}}}}`, `  },`, `  "firmwareVersion": "2.2.0"`, "}")
	return b.d
}
