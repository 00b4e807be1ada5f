package driver

import (
	"regexp"
	"slices"
	"time"
)

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

// iosRefusal is how IOS refuses a line in configuration mode: "%
// Invalid input detected at '^' marker.", "% Incomplete command.", "%
// Ambiguous command:  \"…\"" (Cisco's "Using the Cisco IOS Command-Line
// Interface" guide), and "Command authorization failed." under TACACS+
// command authorization.
var iosRefusal = re(`^% ?(Invalid input|Incomplete command|Ambiguous command|Unknown command|Permission denied)|` +
	`^%Error|^Command authorization failed`)

// nxosRefusal is NX-OS's: "% Invalid command at '^' marker.", "%
// Incomplete command at '^' marker.", "% Ambiguous command at '^'
// marker.", "% Invalid parameter detected at '^' marker." (the NX-OS
// Fundamentals Configuration Guide's CLI chapter), "% Permission denied"
// for a role without the command, and its "ERROR: " messages.
var nxosRefusal = re(`^% ?(Invalid (command|parameter|number|range|value|ip address)|Incomplete command|Ambiguous command|Permission denied)|` +
	`^ERROR: |^Command authorization failed`)

// mergeDrop are the lines of an IOS-like configuration a merge never
// types: the banner and timestamps of the show command and its comments
// ("!", "!Command: …", "!Time: …"), and the final "end", which would
// leave configuration mode half way.
var mergeDrop = []string{`^Building configuration\.\.\.$`, `^Current configuration : \d+ bytes$`, `^\s*!`, `^end$`}

// nxosMergeDrop adds NX-OS's "version 10.4(5) Bios:version 01.11"
// (recordings of show running-config on 7.3 and 10.4 in oxidized's
// spec/model/data/nxos#*): it names the release the switch runs, which
// only an install ("install all") changes. Whatever NX-OS answers to it
// in configuration mode, typing it cannot put a release back, so a
// merge (and its "select all") leaves it out like the comments. Classic
// IOS keeps its "version 15.7": there it is a global configuration
// command.
var nxosMergeDrop = slices.Concat(mergeDrop, []string{`^version \S`})

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
		// Classic IOS has configure replace only from 12.3 on and only
		// with the archive set up, so backupd does not rely on it: a
		// person selects lines of the version and they are typed in
		// configuration mode, as a paste would be.
		Restore: Restore{
			Method:      "merge_lines",
			ConfigEnter: []string{"configure terminal"},
			ConfigExit:  []string{"end"},
			Save:        []string{"write memory"},
			ApplyError:  iosRefusal,
			Drop:        mergeDrop,
			Notes: "A merge of the lines a person selects, never a full replace. The account needs privilege 15 " +
				"(configure terminal and write memory).",
		},
	})
	Register(Platform{
		ID: "cisco_xe", Name: "Cisco IOS-XE", Vendor: "Cisco",
		Aliases:         []string{"iosxe"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        cisco(),
		Noise:           iosNoise,
		Secrets:         ciscoSecrets,
		Syslog:          []SyslogPattern{ciscoConfigI},
		// Configuration replace with a rollback confirmed change: the
		// device needs "archive" with a path (the timer refuses to run
		// without it) and "ip scp server enable" for the copy, and the
		// account privilege 15. The file must not hold the lines about
		// the command: IOS refuses "Building configuration..." and
		// "Current configuration : N bytes" as commands.
		Restore: Restore{
			Method:     "ios_configure_replace",
			ApplyError: re(`[Rr]ollback aborted|[Aa]borting [Rr]ollback|[Rr]ollback failed|not a valid config file|%Turn config archive on|%Please turn config archive on|^% Invalid input|^%Error`),
			Save:       []string{"write memory"},
			Timer:      ConfirmTimer{Default: 5 * time.Minute, Min: time.Minute, Max: 120 * time.Minute},
			File:       "flash:backupd-restore.cfg",
			Drop:       []string{`^Building configuration\.\.\.$`, `^Current configuration : \d+ bytes$`},
		},
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
		Secrets: nxosSecrets,
		// NX-OS 9.3 and later have configure replace, older releases
		// do not: the merge of selected lines works on all of them.
		Restore: Restore{
			Method:      "merge_lines",
			ConfigEnter: []string{"configure terminal"},
			ConfigExit:  []string{"end"},
			Save:        []string{"copy running-config startup-config"},
			ApplyError:  nxosRefusal,
			Drop:        nxosMergeDrop,
			Notes: "A merge of the lines a person selects, never a full replace. The account needs the network-admin role " +
				"(or a role that may configure and copy running-config startup-config).",
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
		Secrets: xrSecrets,
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
		Secrets: asaSecrets,
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
		Secrets:         smbSecrets,
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
		Secrets: wlcSecrets,
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
		Secrets: asaSecrets,
		Notes: "FTD on Firepower and Secure Firewall appliances, collected from the CLISH \">\" prompt. " +
			"`show running-config all` includes the defaults; the CLISH masks passwords and keys (only expert mode shows them).",
	})
}

// Secret rules of the Cisco platforms other than IOS and IOS-XE (which
// use ciscoSecrets), and the IOS-like rules the switches that copy IOS
// (Arista, Ruijie, FS.com, Lenovo) share.

// ciscoShown is a value as ASA, FTD and AireOS print it: they hide some
// secrets themselves behind a row of asterisks ("*****"), which is no
// secret and stays as it is; any other value is masked (inside its
// quotes when quoted).
const ciscoShown = `(?:"(?P<secret>[^"]*)"|(?P<secret>[^\s"*]\S*|\*+[^\s*]\S*))`

// IOS-like rules: the statements IOS writes, with an optional type word
// or digit before the value (0, 5, 7, 8, 9, encrypted, sha512…).
var (
	ciscoEnableRule   = SecretRule{Name: "enable password", Match: `^enable (?:secret|password)(?: level \d+)? ` + secretTyped}
	ciscoUserRule     = SecretRule{Name: "user password", Match: `^username \S+ (?:\S+ )*?(?:password|secret) ` + secretTyped}
	ciscoCommunity    = SecretRule{Name: "SNMP community", Match: `^snmp-server community ` + secretTyped}
	ciscoAAAKeyRule   = SecretRule{Name: "TACACS+/RADIUS key", Match: `^(?:tacacs|radius)-server (?:\S+ )*?key ` + secretTyped}
	ciscoOSPFRule     = SecretRule{Name: "OSPF key", Match: `\bip ospf (?:authentication-key|message-digest-key \d+ md5) ` + secretTyped}
	ciscoKeyString    = SecretRule{Name: "key string", Match: `\bkey-string ` + secretTyped}
	ciscoRMONRule     = SecretRule{Name: "RMON trap community", Match: `^rmon event \d+(?: log)? trap ` + secretValue}
	ciscoLinePassword = SecretRule{Name: "line or neighbor password", Match: `^ +(?:neighbor \S+ )?password ` + secretTyped}
	// IOS writes the key's type after it ("md5 0822455D0A16 7"), EOS
	// and others before it ("md5 7 0822455D0A16").
	ciscoNTPRule = SecretRule{Name: "NTP key", Match: `^ntp authentication-key \d+ (?:md5|sha1|sha256) (?:[0-9] )?` + secretValue}
)

// nxosSecrets: NX-OS writes user password hashes (type 5), SNMP
// communities (also in RMON events and community maps) and SNMPv3
// localized keys, TACACS+/RADIUS/LDAP keys in quotes, BGP neighbor
// passwords (type 3 or 7, under the neighbor), OSPF, key chain, HSRP/VRRP,
// MACsec, PIM and NTP keys.
var nxosSecrets = []SecretRule{
	// NX-OS always writes the type (5). A locked account's password is
	// "!", which stays.
	{Name: "user password", Match: `^username \S+ password [0-9] (?P<secret>[^\s!]\S*|!\S+)`},
	{Name: "enable secret", Match: `^enable secret (?:[0-9] )?` + secretValue},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	// The community follows the version: other snmp-server host lines
	// ("use-vrf management", "source-interface mgmt0") hold none.
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ (?:(?:informs|traps) )?version (?:1|2c) ` + secretValue},
	{Name: "SNMP community map", Match: `^snmp-server mib community-map ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ (?:\S+ )*?auth (?:md5|sha\S*) ` + secretValue +
		`(?: priv (?:(?:aes-128|des|3des) )?` + secretValue + `)?`},
	ciscoRMONRule,
	ciscoAAAKeyRule,
	{Name: "LDAP bind password", Match: `^ldap-server host .*? password ` + secretTyped},
	{Name: "BGP neighbor password", Match: `^ +password ` + secretTyped},
	{Name: "OSPF key", Match: `^ +(?:ip ospf )?(?:authentication-key|message-digest-key \d+ md5) ` + secretTyped},
	ciscoKeyString,
	{Name: "MACsec key", Match: `^ +key-octet-string ` + secretTyped},
	{Name: "HSRP/VRRP text authentication", Match: `^ +authentication text ` + secretValue},
	{Name: "PIM hello key", Match: `^ +ip pim hello-authentication ah-md5 ` + secretTyped},
	ciscoNTPRule,
}

// xrSecrets: IOS-XR writes user secrets and passwords under the username
// (and BGP, LDP neighbor passwords) always with their type ("secret 10",
// "password encrypted"), so that "password inheritance-disable" stays;
// SNMP communities and SNMPv3 keys, TACACS+/RADIUS keys (global or under
// the host), key chains, OSPF, IS-IS, NTP, VRRP and CoA keys.
var xrSecrets = []SecretRule{
	{Name: "password or secret", Match: `^ +(?:neighbor \S+ )?(?:password|secret) (?:[0-9]{1,2}|encrypted|clear) ` + secretValue},
	{Name: "SNMP community", Match: `^snmp-server community (?:clear |encrypted )?` + secretValue},
	// Under "snmp-server vrf NAME" the host is " host ...".
	{Name: "SNMP trap community", Match: `^(?:snmp-server | +)host \S+(?: (?:clear|encrypted|informs|traps|version (?:1|2c|3 (?:auth|noauth|priv))))+ ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ v3 auth (?:md5|sha\S*) (?:clear |encrypted )?` + secretValue +
		`(?: priv (?:(?:aes|des|3des)(?:-?\d+)?(?: \d+)? )?(?:clear |encrypted )?` + secretValue + `)?`},
	ciscoAAAKeyRule,
	// The key line under "tacacs-server host" or "radius-server host";
	// a key chain's " key 1" has no type and stays.
	{Name: "AAA server key", Match: `^ +key (?:[0-9] |encrypted |clear )` + secretValue},
	{Name: "key string", Match: `\bkey-string (?:password )?` + secretTyped},
	{Name: "OSPF key", Match: `^ +(?:authentication-key|message-digest-key \d+ md5) (?:encrypted|clear) ` + secretValue},
	{Name: "IS-IS password", Match: `^ +(?:lsp|hello)-password (?:hmac-md5|text) (?:encrypted |clear )?` + secretValue},
	{Name: "NTP key", Match: `^(?:ntp)? +authentication-key \d+ md5 (?:encrypted |clear )?` + secretValue},
	{Name: "VRRP password", Match: `^ +text-authentication ` + secretValue},
	{Name: "CoA server key", Match: `^ +server-key (?:[0-9] |encrypted |clear )?` + secretValue},
}

// asaSecrets: ASA (and FTD, whose data plane is the ASA's) configurations
// from "more system:running-config" show keys in clear: enable, passwd and
// user password hashes, aaa-server keys and LDAP bind passwords, IKEv1/IKEv2
// and failover pre-shared keys, SNMP communities (also per trap host) and
// SNMPv3 keys, NTP, failover, OSPF, BGP, EIGRP, IS-IS, key chain and VPDN
// secrets. A type digit (0, 8 with "password encryption aes") may come
// before the value.
var asaSecrets = []SecretRule{
	{Name: "enable password", Match: `^enable password (?:level \d+ )?` + ciscoShown},
	{Name: "login password", Match: `^passwd ` + ciscoShown},
	{Name: "user password", Match: `^username \S+ password ` + ciscoShown},
	// The key line of an "aaa-server NAME (if) host" block; a key chain's
	// " key 1" (an ID: digits, short) stays.
	{Name: "AAA server key", Match: `^ +key (?P<secret>\S*[^\s0-9*]\S*|[0-9]{6,})$`},
	{Name: "LDAP bind password", Match: `^ +ldap-login-password ` + ciscoShown},
	// " ikev1 pre-shared-key", " ikev2 remote-authentication
	// pre-shared-key hex", " pre-shared-key" (8.2), "failover ipsec
	// pre-shared-key 0".
	{Name: "pre-shared key", Match: `^(?: +(?:ikev[12] (?:(?:local|remote)-authentication )?)?|failover ipsec )pre-shared-key(?: hex)?(?: [0-9])? ` + ciscoShown},
	{Name: "SNMP community", Match: `^snmp-server community (?:[0-9] )?` + ciscoShown},
	{Name: "SNMP host community", Match: `^snmp-server host(?:-group)? (?:\S+ )+?community (?:[0-9] )?` + ciscoShown},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ v3 (?:\S+ )*?auth (?:md5|sha\d*) ` + ciscoShown +
		`(?: priv (?:des|3des|aes(?: \d+)?) ` + ciscoShown + `)?`},
	{Name: "NTP key", Match: `^ntp authentication-key \d+ (?:md5|sha1|sha256|sha512|cmac) (?:[0-9] )?` + ciscoShown},
	{Name: "failover key", Match: `^failover key (?:hex |[0-9] )?` + ciscoShown},
	{Name: "OSPF key", Match: `^ +ospf (?:authentication-key|message-digest-key \d+ md5)(?: [0-9])? ` + ciscoShown},
	{Name: "BGP neighbor password", Match: `^ +neighbor \S+ password(?: [0-9])? ` + ciscoShown},
	{Name: "EIGRP key", Match: `^ +authentication key eigrp \d+(?: [0-9])? ` + ciscoShown},
	{Name: "key string", Match: `^ +key-string(?: [0-9])? ` + ciscoShown},
	{Name: "IS-IS password", Match: `^ +(?:isis password|area-password|domain-password) ` + ciscoShown},
	{Name: "VPDN password", Match: `^vpdn username \S+ password ` + ciscoShown},
}

// smbSecrets: the small-business switches write most secrets encrypted,
// with "encrypted" before the statement or the value: enable and user
// password hashes, RADIUS/TACACS+ keys, SNTP keys, the SSH client
// password, and SNMP communities and SNMPv3 keys.
var smbSecrets = []SecretRule{
	{Name: "enable password", Match: `^(?:encrypted )?enable password (?:level \d+ )?(?:encrypted )?` + secretValue},
	{Name: "user password", Match: `^(?:encrypted )?username (?:"[^"]*"|\S+) (?:privilege \d+ )?password (?:encrypted )?` + secretValue},
	{Name: "SNMP community", Match: `^(?:encrypted )?snmp-server community ` + secretValue},
	{Name: "SNMP trap community", Match: `^snmp-server host \S+(?: (?:traps|informs|version (?:1|2c?|3 (?:auth|noauth|priv))))* ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^(?:encrypted )?snmp-server user \S+ \S+ v3 (?:\S+ )*?auth (?:md5|sha\S*) ` + secretValue +
		`(?: priv ` + secretValue + `)?`},
	{Name: "TACACS+/RADIUS key", Match: `^(?:encrypted )?(?:tacacs|radius)-server (?:\S+ )*?key ` + secretValue},
	{Name: "SNTP key", Match: `^(?:encrypted )?sntp authentication-key \d+ md5 ` + secretValue},
	{Name: "SSH client password", Match: `^(?:encrypted )?ip ssh-client password ` + secretValue},
	{Name: "line password", Match: `^ +password ` + secretValue},
}

// wlcBlob is a secret AireOS keeps encrypted: "1 <hex> <hex> <length>
// <hex>" (a key version, two hex digests, the length, the zero-padded
// ciphertext). The three hex fields are masked.
const wlcBlob = `[0-9] (?P<secret>[0-9a-fA-F]+) (?P<secret>[0-9a-fA-F]+) \d+ (?P<secret>[0-9a-fA-F]+)`

// wlcSecrets: AireOS "config" commands with RADIUS/TACACS+ secrets and
// key-wrap keys, management, AP management and guest user passwords, Wi-Fi
// PSKs and WEP keys, SNMP communities (create, access mode, address, mode,
// and trap receivers, named by their community) and SNMPv3 keys, LDAP bind
// and file transfer passwords. Encrypted values are "encrypt" blobs;
// "****" is the controller hiding a value itself.
var wlcSecrets = []SecretRule{
	{Name: "RADIUS/TACACS+ secret", Match: `^config (?:radius|tacacs) (?:auth|acct|athr) add (?:encrypt )?\d+ \S+ \d+ (?:password ` + wlcBlob +
		`|(?:ascii|hex) ` + ciscoShown + `)`},
	{Name: "RADIUS key wrap keys", Match: `^config radius auth keywrap add (?:ascii|hex) ` + ciscoShown + ` ` + ciscoShown},
	{Name: "FlexConnect RADIUS secret", Match: `^config flexconnect group \S+ radius server auth add (?:primary|secondary) \S+ \d+ ` + ciscoShown},
	{Name: "management user password", Match: `^config mgmtuser (?:add encrypt \S+ ` + wlcBlob + `|(?:add|password) \S+ ` + ciscoShown + `)`},
	// The encrypted form adds the hash of the password, in hex.
	{Name: "AP management user", Match: `^config ap mgmtuser add (?:encrypt username \S+ password ` + wlcBlob +
		`(?: (?P<secret>[0-9a-fA-F]+))? secret encrypt (?P<secret>[0-9a-fA-F]+)|username \S+ password ` + ciscoShown + ` secret ` + ciscoShown + `)`},
	{Name: "AP 802.1X supplicant password", Match: `^config ap 802\.1Xuser add username \S+ password ` + ciscoShown},
	{Name: "Wi-Fi passphrase", Match: `^config wlan security wpa akm psk set-key (?:ascii|hex) (?:encrypt ` + wlcBlob + `|` + ciscoShown + `)`},
	{Name: "WEP key", Match: `^config wlan security static-wep-key encryption \d+ \d+ (?:ascii|hex) ` + ciscoShown},
	// "config snmp community delete public" removes the default: it stays.
	{Name: "SNMP community", Match: `^config snmp community (?:create|accessmode r[ow]|mode (?:enable|disable)|ipaddr \S+ \S+) ` + ciscoShown},
	{Name: "SNMP trap receiver community", Match: `^config snmp trapreceiver (?:create ` + ciscoShown + ` \S+$|mode (?:enable|disable) ` + ciscoShown +
		`$|ipsec .* ` + ciscoShown + `$)`},
	{Name: "SNMPv3 keys", Match: `^config snmp v3user create \S+ r[ow] (?:none|hmacmd5|hmacsha) (?:none|des|aescfb128) ` + ciscoShown + `(?: ` + ciscoShown + `)?`},
	{Name: "local user password", Match: `^config netuser (?:add encrypt \S+ ` + wlcBlob + `|(?:add|password) \S+ ` + ciscoShown + `)`},
	{Name: "LDAP bind password", Match: `^config ldap simple-bind authenticated \d+ \S+ ` + ciscoShown},
	{Name: "file transfer password", Match: `^transfer (?:download|upload) (?:encrypt password ` + wlcBlob + `|password ` + ciscoShown + `)`},
}
