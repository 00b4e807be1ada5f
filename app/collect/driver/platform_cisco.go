package driver

import "regexp"

// Cisco IOS, IOS-XE, NX-OS, IOS-XR and ASA.

// ciscoPrompt: "R1>", "R1#", "R1(config-if)#", "asa/pri/act#",
// "RP/0/RSP0/CPU0:XR-PE1#", "leaf1(s1)#".
var ciscoPrompt = re(`^[\w.\-@/:]{1,80}(\([\w.\-/:]{1,40}\))?[>#]$`)

var (
	// ciscoMore: IOS " --More-- ", NX-OS, EOS, XR, Dell "--more--".
	ciscoMore = re(`(?i)--\s?more\s?--$`)
	// ciscoError: IOS, XE, NX-OS, XR, EOS, ASA, Ruijie, Dell OS10.
	ciscoError = re(`^\s*(ERROR: )?%\s?(Invalid|Incomplete command|Ambiguous command|Unknown command|Unrecognized|Error|Bad|Permission denied)|` +
		`^\s*Command authorization failed|^\s*% ?Authorization failed`)
)

// cisco is the IOS dialogue that many platforms start from.
func cisco() Dialogue {
	return Dialogue{
		Prompt:         ciscoPrompt,
		Pager:          ciscoMore,
		PagingOff:      []string{"terminal length 0", "terminal width 511"},
		Enable:         "enable",
		Privileged:     privileged,
		PasswordPrompt: passwordQ,
		EnableFailed:   enableFailed,
		CommandError:   ciscoError,
	}
}

// unprivileged is a Cisco-like dialogue for platforms that log in at their
// only level: there is no enable step.
func unprivileged(d Dialogue) Dialogue {
	d.Enable, d.Privileged, d.PasswordPrompt = "", nil, nil
	return d
}

// Cisco IOS and its relatives put a build banner, the size and two
// timestamps in front of the configuration; the "last change" line moves
// when anyone leaves configuration mode, even without a change, and the
// NVRAM line on every `write memory`.
var ciscoHeader = []string{
	`^Building configuration\.\.\.$`,
	`^Current configuration : \d+ bytes$`,
	`^! Last configuration change at `,
	`^! NVRAM config last updated at `,
	`^! No configuration change since last restart$`,
}

// ciscoConfigI is "%SYS-5-CONFIG_I: Configured from console by vty2
// (10.34.195.36)", also with a stack member ("%SYS-SW2-5-CONFIG_I" on
// IOS-XE stacks). Arista EOS and Ruijie RGOS send the same message.
var ciscoConfigI = SyslogPattern{
	Name:    "cisco-sys-config-i",
	Needles: []string{"CONFIG_I"},
	Match:   regexp.MustCompile(`%SYS-(?:SW\d+-)?5-CONFIG_I\b`),
}

func init() {
	// ntp clock-period is written back by IOS as it trims the clock.
	iosNoise := append(append([]string{}, ciscoHeader...), `^ntp clock-period \d+$`)

	Register(Platform{
		ID: "cisco_ios", Name: "Cisco IOS", Vendor: "Cisco",
		Aliases:         []string{"ios", "cisco"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        cisco(),
		Noise:           iosNoise,
		Secrets:         ciscoSecrets,
		Syslog:          []SyslogPattern{ciscoConfigI},
	})
	Register(Platform{
		ID: "cisco_xe", Name: "Cisco IOS-XE", Vendor: "Cisco",
		Aliases:         []string{"iosxe"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        cisco(),
		Noise:           iosNoise,
		Secrets:         ciscoSecrets,
		Syslog:          []SyslogPattern{ciscoConfigI},
	})

	// NX-OS logs in at its only level ("feature privilege" aside) and
	// prints "\r" before every prompt, which the cleanup absorbs. It stamps
	// the time of the command and of the last change.
	Register(Platform{
		ID: "cisco_nxos", Name: "Cisco NX-OS", Vendor: "Cisco",
		Aliases:         []string{"nxos", "cisco-nx", "ios-nx"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        unprivileged(cisco()),
		Noise: []string{
			`^!Time: `,
			`^!Running configuration last done at: `,
			`^!No configuration change since last restart$`,
		},
		Syslog: []SyslogPattern{{
			// "%VSHD-5-VSHD_SYSLOG_CONFIG_I: Configured from vty by admin on ..."
			Name:    "nxos-vshd-config-i",
			Needles: []string{"VSHD_SYSLOG_CONFIG_I"},
			Match:   regexp.MustCompile(`%VSHD-5-VSHD_SYSLOG_CONFIG_I\b`),
		}},
	})

	// IOS-XR has no enable: task groups decide what a user may run. It
	// prints the time of the command before its output ("Thu Aug 29
	// 11:54:34.123 UTC"), a version banner and a change stamp. RANCID
	// names XR by release (ios-xr7 for 7.x, ios-exr for the 64-bit eXR):
	// the same command line and running configuration.
	Register(Platform{
		ID: "cisco_xr", Name: "Cisco IOS-XR", Vendor: "Cisco",
		Aliases:         []string{"iosxr", "cisco-xr", "ios-xr", "ios-xr7", "cisco-xr7", "ios-exr", "cisco-exr"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        unprivileged(cisco()),
		Noise: []string{
			`^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d{2}:\d{2}:\d{2}(\.\d+)? [A-Za-z][\w+-]*$`,
			`^Building configuration\.\.\.$`,
			`^!! IOS XR Configuration `,
			`^!! Last configuration change at `,
			`^!! No configuration change since last restart$`,
		},
		Syslog: []SyslogPattern{{
			// "%MGBL-CONFIG-6-DB_COMMIT : Configuration committed by user
			// 'admin'. ..." (and DB_COMMIT_ADMIN for the admin plane).
			Name:    "iosxr-db-commit",
			Needles: []string{"DB_COMMIT"},
			Match:   regexp.MustCompile(`%MGBL-CONFIG-6-DB_COMMIT(?:_ADMIN)?\b`),
		}},
	})

	// ASA: "terminal pager 0" lasts for the session; the configuration
	// command "pager lines 0" would be saved. show running-config masks
	// pre-shared keys; more system:running-config does not. The header
	// says who saved last and when, with the checksum written with it.
	asa := cisco()
	asa.PagingOff = []string{"terminal pager 0"}
	asa.Pager = re(`<--- More --->$`)
	Register(Platform{
		ID: "cisco_asa", Name: "Cisco ASA", Vendor: "Cisco",
		Aliases:         []string{"asa"},
		DefaultCommands: lines("more system:running-config"),
		Dialogue:        asa,
		Noise: []string{
			`^: Saved$`,
			`^: Written by \S+ at `,
			`^Cryptochecksum: ?[0-9a-fA-F ]+$`,
		},
		Syslog: []SyslogPattern{{
			// %ASA-5-111008 "User 'admin' executed the 'X' command" (every
			// command but show) and %ASA-5-111010 "User 'admin', running
			// 'CLI' from IP a.b.c.d, executed 'X'" (FTD and PIX likewise).
			// Commands that change nothing are excluded.
			Name:    "asa-command-executed",
			Needles: []string{"-1110"},
			Match:   regexp.MustCompile(`%(?:ASA|PIX|FTD)-(?:[a-z]+-)?5-1110(?:08|10)\b`),
			Exclude: regexp.MustCompile(`executed (?:the )?'(?:show|sh|dir|more|ping|traceroute|terminal|enable|exit|end|logout|quit|` +
				`who|perfmon|capture|no capture|clear|debug|undebug|no debug|packet-tracer|changeto|configure terminal|conf t|` +
				`write terminal|login|copy|verify)\b`),
		}},
	})
}

// Cisco small-business switches (SG300/350/550, CBS), the AireOS wireless
// controllers and Firepower Threat Defense.

// sbPager is the pager of the Cisco small-business and Dell PowerConnect
// (Marvell) switches: "More: <space>,  Quit: q or CTRL+Z, One line: <return> ".
var sbPager = re(`More: <space>, +Quit: q.{0,40}One line: <return>$`)

// fastpathPager is the pager of the FASTPATH-derived command lines (AireOS,
// Dell N-series and PowerConnect 62xx/M-series): "--More-- or (q)uit".
var fastpathPager = re(`--More-- or \(q\)uit.{0,60}$`)

// credentialAnswers answer a command line that asks for the username and
// password again after the SSH login, as AireOS always does and Cisco
// small-business switches do without "ip ssh password-auth". Over telnet
// the login has answered them already.
func credentialAnswers(user, password *regexp.Regexp) []Answer {
	return []Answer{{Match: user, Send: UsernamePlaceholder + "\n"}, {Match: password, Send: PasswordPlaceholder + "\n"}}
}

func init() {
	// Small-business switches log level-15 users in at "#", others at ">"
	// with "enable" asking for a password. "terminal datadump" turns the
	// pager off for the session; the configuration carries no timestamp.
	smb := cisco()
	smb.PagingOff = []string{"terminal datadump"}
	smb.Pager = sbPager
	smb.PreLogin = credentialAnswers(re(`^User ?Name:$`), re(`^Password:$`))
	Register(Platform{
		ID: "cisco_smb", Name: "Cisco Small Business (SG/CBS)", Vendor: "Cisco",
		Aliases:         []string{"ciscosmb", "ciscocbs", "cisco_s300", "cisco-sb", "ios-sb"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        smb,
		Notes: "SG300/350/550 and CBS250/350 switches. Without `ip ssh password-auth` the switch asks for " +
			"the username and password again after the SSH login; backupd answers with the device's credentials.",
	})

	// AireOS lets any SSH client in and then asks "User:" and "Password:"
	// on the command line; the prompt is the system prompt in brackets,
	// "(Cisco Controller) >", with no enable step. The rogue access points
	// and clients the controller has heard are listed in the configuration
	// and come and go on their own.
	wlc := Dialogue{
		Prompt:       re(`^\([^()]{1,64}\) ?(config[\w\- ]{0,30})?>$`),
		Pager:        fastpathPager,
		PagingOff:    []string{"config paging disable"},
		PreLogin:     credentialAnswers(re(`^User:$`), re(`^Password:$`)),
		CommandError: re(`^\s*(Incorrect usage|Incorrect input|Invalid command|Command not found)`),
	}
	Register(Platform{
		ID: "cisco_wlc", Name: "Cisco Wireless LAN Controller (AireOS)", Vendor: "Cisco",
		Aliases:         []string{"aireos", "cisco-wlc4", "cisco-wlc5", "cisco-wlc8"},
		DefaultCommands: lines("show run-config commands"),
		Dialogue:        wlc,
		Noise: []string{
			`^(config )?rogue (adhoc|client) (alert|Unknown) [0-9a-fA-F]{2}:`,
		},
		Notes: "AireOS (5500/8500/3504 and vWLC). The controller asks for the username and password again " +
			"after the SSH login; backupd answers with the device's credentials. Catalyst 9800 controllers run IOS-XE: use cisco_xe.",
	})

	// FTD: the CLISH prompt is a bare ">"; there is no telnet. Its
	// configuration is deployed from FMC or FDM, which rewrites it (and its
	// checksum) at every deployment even when nothing changed.
	ftd := unprivileged(cisco())
	ftd.Prompt = re(`^>$`)
	ftd.PagingOff = nil
	ftd.Pager = re(`(<--- More --->|--More--)$`)
	Register(Platform{
		ID: "cisco_ftd", Name: "Cisco Firepower Threat Defense", Vendor: "Cisco",
		Aliases:         []string{"firelinuxos"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("show running-config all"),
		Dialogue:        ftd,
		Noise: []string{
			`^: Saved$`,
			`^: Written by \S+ at `,
			`^Cryptochecksum: ?[0-9a-fA-F ]+$`,
		},
		Notes: "FTD on Firepower and Secure Firewall appliances, collected from the CLISH \">\" prompt. " +
			"`show running-config all` includes the defaults; the CLISH masks passwords and keys (only expert mode shows them).",
	})
}
