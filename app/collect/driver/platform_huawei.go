package driver

import (
	"regexp"
	"strings"
)

// Huawei VRP and the H3C/HPE Comware family, which shares its heritage.

var (
	// vrpPrompt: "<HUAWEI>", "[HUAWEI]", "[~HUAWEI]",
	// "[*HUAWEI-GigabitEthernet0/0/1]", "<H3C>", "RBM_P<H3C>" (an RBM pair
	// member).
	vrpPrompt = re(`^(RBM_[PS])?(<[^<>\s][^<>]{0,127}>|\[[~*]?[^\[\]\s][^\[\]]{0,159}\])$`)
	vrpMore   = re(`(?i)-{2,}\s?more\s?-{2,}$`)
	vrpError  = re(`^\s*(Error:|%\s?(Unrecognized|Incomplete|Wrong|Too many|Ambiguous))`)
)

func vrp(pagingOff string) Dialogue {
	return Dialogue{
		Prompt:    vrpPrompt,
		Pager:     vrpMore,
		PagingOff: []string{pagingOff},
		// User view and the raised level share "<host>": super runs only
		// when a super password is configured for the device.
		Enable:                 "super",
		EnableWithPasswordOnly: true,
		PasswordPrompt:         passwordQ,
		EnableFailed:           enableFailed,
		CommandError:           vrpError,
		PreLogin: []Answer{
			// Expired or initial passwords: keep the password, log in.
			{Match: re(`(?i)change now\? ?\[y/n\]:?$`), Send: "N\n"},
		},
	}
}

// vrpNoise: the software version and update/save stamps written as `!`
// lines.
var vrpNoise = []string{
	`^!Software Version \S+`,
	`^!Last configuration was \w+ at `,
}

// vrpCipherMarks are the marks Huawei wraps reversible cipher text in:
// %^%#…%^%# (VRP 5 from R7, VRP 8), %$%$…%$%$ and %@%@…%@%@ (older VRP 5),
// %@%#…%@%# and %#%#…%#%#, and %+%#…%+%# (SmartAX). The text holds any
// printable character, quotes and "%" included.
var vrpCipherMarks = []string{`%\^%#`, `%\$%\$`, `%@%@`, `%@%#`, `%#%#`, `%\+%#`}

// vrpCipherText masks wrapped cipher text wherever it is. A line the
// device wrapped at the terminal's width may end inside the text, before
// the closing mark (then the rest of the line is masked), and the next
// line begins with the text's end (masked up to the mark) or with the
// mark alone (kept).
func vrpCipherText() SecretRule {
	var alt []string
	for _, m := range vrpCipherMarks {
		alt = append(alt, m+`(?P<secret>\S.*?)(?:`+m+`|$)`, `^(?P<secret>\S+?)`+m)
	}
	return SecretRule{Name: "cipher text", Match: strings.Join(alt, "|")}
}

// vrpValue is a Huawei or Comware value: one word, which is all of a
// cipher text (marks and quotes included; it holds no space).
const vrpValue = `(?P<secret>\S+)`

// vrpAuthMode masks the key of "authentication-mode <mode> [[key-id] <n>]
// {cipher|plain|simple} <key>" (OSPF and IS-IS interfaces, areas and
// domains, NTP, VRRP, RIP); a mode without a key ("authentication-mode
// aaa" of a user interface) stays.
const vrpAuthMode = `(?:^|\s)(?:area-|domain-)?authentication-mode (?:\S+ ){0,3}(?:cipher|plain|simple) ` + vrpValue

// vrpSecrets are the secrets of Huawei VRP 5 and 8 configurations: the
// device shows reversible keys as wrapped cipher text ("cipher
// %^%#…%^%#"), local user passwords as irreversible hashes
// ("irreversible-cipher $1c$…$"), and older releases show some in clear
// ("simple", "plain", an SNMP community without "cipher").
var vrpSecrets = []SecretRule{
	{Name: "local user password", Match: `^\s*local-user \S+ password (?:irreversible-cipher|cipher|simple) ` + vrpValue},
	{Name: "super or console password", Match: `^\s*(?:super password(?: level \d+)?|set authentication password) (?:irreversible-cipher|cipher|simple) ` + vrpValue},
	{Name: "SNMP community", Match: `^\s*snmp-agent community (?:read|write) (?:cipher )?` + vrpValue},
	// A v1/v2c target's security name is the community its traps carry;
	// a v3 target's is a user name, and stays.
	{Name: "SNMP trap community", Match: `^\s*snmp-agent target-host (?:trap|inform) .*?\bsecurityname (?:cipher )?` + vrpValue + `(?: v1\b| v2c\b|$)`},
	{Name: "SNMPv3 keys", Match: `^\s*snmp-agent usm-user v3 .*?\b(?:authentication|privacy)-mode \S+ (?:cipher )?` + vrpValue +
		`(?: .*?\bprivacy-mode \S+ (?:cipher )?` + vrpValue + `)?`},
	{Name: "RADIUS/HWTACACS key", Match: `(?:^|\s)shared-key(?:-cipher)? (?:cipher |simple )?` + vrpValue},
	{Name: "BGP peer password", Match: `^\s*peer \S+ password (?:cipher|simple) ` + vrpValue},
	{Name: "password", Match: `(?:^|\s)password (?:irreversible-cipher|cipher|simple) ` + vrpValue},
	{Name: "routing, NTP or VRRP authentication key", Match: vrpAuthMode},
	{Name: "key chain key", Match: `(?:^|\s)key-string (?:cipher |plain |simple )?` + vrpValue},
	{Name: "IKE pre-shared key", Match: `(?:^|\s)pre-shared-key (?:cipher |simple )?` + vrpValue},
	{Name: "Wi-Fi passphrase", Match: `(?:^|\s)pass-phrase (?:cipher |simple )?` + vrpValue},
	{Name: "SIM PIN", Match: `(?:^|\s)pin verify (?:auto )?(?:cipher |simple )?` + vrpValue},
	vrpCipherText(),
}

// comwareSecrets are the secrets of HPE and H3C Comware 5 and 7: keys
// shown as reversible "cipher $c$3$…", passwords as "hash $h$6$…" (or
// "cipher" on Comware 5), some in clear ("simple", a community or a v2c
// trap target's security name).
var comwareSecrets = []SecretRule{
	// " password hash $h$6$…" under local-user, or on the same line.
	{Name: "local user password", Match: `^\s*(?:local-user \S+ )?password (?:hash|cipher|simple|irreversible-cipher) ` + vrpValue},
	{Name: "super or console password", Match: `^\s*(?:super password(?: role \S+| level \d+)?|set authentication password) (?:hash|cipher|simple) ` + vrpValue},
	// Comware 7 with roles: "snmp-agent community cipher $c$3$… user-role
	// network-operator"; Comware 5: "snmp-agent community read public".
	{Name: "SNMP community", Match: `^\s*snmp-agent community (?:read |write )?(?:cipher |simple )?` + vrpValue},
	{Name: "SNMP trap community", Match: `^\s*snmp-agent target-host (?:trap|inform) .*?\bsecurityname ` + vrpValue + `(?: v1\b| v2c\b|$)`},
	// "… cipher authentication-mode sha $c$3$… privacy-mode aes128 $c$3$…".
	{Name: "SNMPv3 keys", Match: `^\s*snmp-agent usm-user v3 .*?\bauthentication-mode \S+ ` + vrpValue +
		`(?: privacy-mode \S+ ` + vrpValue + `)?`},
	// " key authentication cipher …" of a RADIUS or HWTACACS scheme, or
	// " primary authentication 10.0.0.1 key cipher …".
	{Name: "RADIUS/HWTACACS key", Match: `^\s*(?:(?:primary|secondary) (?:authentication|authorization|accounting) .*?)?` +
		`\bkey (?:(?:authentication|authorization|accounting) )?(?:cipher|simple) ` + vrpValue},
	{Name: "BGP peer password", Match: `^\s*peer \S+ password (?:cipher|simple) ` + vrpValue},
	{Name: "PPP password", Match: `^\s*ppp (?:chap password|pap local-user \S+ password) (?:cipher|simple) ` + vrpValue},
	{Name: "routing, NTP or VRRP authentication key", Match: vrpAuthMode},
	{Name: "key chain key", Match: `(?:^|\s)key-string (?:cipher|plain|simple) ` + vrpValue},
	{Name: "IKE pre-shared key", Match: `(?:^|\s)pre-shared-key (?:address \S+(?: \S+)? |hostname \S+ )?(?:key )?(?:cipher|simple) ` + vrpValue},
	{Name: "Wi-Fi passphrase", Match: `(?:^|\s)preshared-key (?:pass-phrase|raw-key) (?:cipher|simple) ` + vrpValue},
	// Any other reversible cipher or hash, whatever its keyword.
	{Name: "cipher text or hash", Match: `(?P<secret>\$c\$\d+\$\S+)|(?P<secret>\$h\$\d+\$\S+)`},
}

var vrpSyslog = []SyslogPattern{
	{
		// Configuration-changed events: "CONFIGURATION/6/CFG_FILE_CHANGE",
		// "CONFIGURATION/6/NETCONF_CONFIG_CHANGE_EVENT", "CFG/4/CFG_CHANGE"
		// (older VRP), "CFGMAN/5/CFGMAN_CFGCHANGED" (Comware).
		Name:    "huawei-h3c-cfg-change",
		Needles: []string{"CFG", "CONFIG"},
		Match: regexp.MustCompile(`(?:CFG/\d/CFG_CHANGE|CONFIGURATION/\d/(?:CFG_FILE_CHANGE|CFG_CHANGE|NETCONF_CONFIG_CHANGE_EVENT)|` +
			`CFGMAN/\d/CFGMAN_CFGCHANGED)\b`),
	},
	{
		// Command records: Huawei "SHELL/5/CMDRECORD: ... Command="..."" and
		// Comware "SHELL/5/SHELL_CMD: ...; Command is ...". They record
		// every command, so read-only and session commands are excluded.
		Name:    "huawei-h3c-command-record",
		Needles: []string{"SHELL/"},
		Match:   regexp.MustCompile(`SHELL/\d/(?:CMDRECORD|SHELL_CMD)\b`),
		Exclude: regexp.MustCompile(`(?i)(?:command\s*[=:]\s*"?|command is\s+)\s*(?:display|dis|dir|ping|tracert|quit|q|return|` +
			`system-view|sys|screen-length|undo screen-length|terminal|undo terminal|save|log off|bash|\?)(?:\s|"|\.|\)|;|$)`),
	},
}

func init() {
	Register(Platform{
		ID: "huawei_vrp", Name: "Huawei VRP", Vendor: "Huawei",
		Aliases:         []string{"vrp", "huawei"},
		DefaultCommands: lines("display current-configuration"),
		Dialogue:        vrp("screen-length 0 temporary"),
		Noise:           vrpNoise,
		Syslog:          vrpSyslog,
		Secrets:         vrpSecrets,
	})
	Register(Platform{
		ID: "huawei_vrpv8", Name: "Huawei VRP V8", Vendor: "Huawei",
		Aliases:         []string{"vrpv8"},
		DefaultCommands: lines("display current-configuration"),
		Dialogue:        vrp("screen-length 0 temporary"),
		Noise:           vrpNoise,
		Syslog:          vrpSyslog,
		Secrets:         vrpSecrets,
	})
	Register(Platform{
		ID: "hp_comware", Name: "HPE Comware", Vendor: "HPE",
		Aliases:         []string{"comware"},
		DefaultCommands: lines("display current-configuration"),
		Dialogue:        vrp("screen-length disable"),
		Noise:           vrpNoise,
		Syslog:          vrpSyslog,
		Secrets:         comwareSecrets,
	})
	Register(Platform{
		ID: "h3c_comware", Name: "H3C Comware", Vendor: "H3C",
		Aliases:         []string{"h3c"},
		DefaultCommands: lines("display current-configuration"),
		Dialogue:        vrp("screen-length disable"),
		Noise:           vrpNoise,
		Syslog:          vrpSyslog,
		Secrets:         comwareSecrets,
	})
}

func init() {
	// Huawei SmartAX access nodes and OLTs (MA5600T, MA5800, EA5800): an
	// IOS-shaped prompt ("MA5800-X7>", "#" after `enable`, ">>User name:"
	// on telnet) rather than VRP's <host>. In the default "smart" mode a
	// command with optional parameters asks for them with "{ <cr>|...||<K>
	// }:" and waits for Enter, and confirmations ask "(y/n)": `undo smart`
	// and `undo interactive` turn both off for the session, `infoswitch cli
	// OFF` stops debugging messages in the output, and `scroll` without a
	// number lifts the page length. Some releases ask "(YES/NO)" after a
	// post-login notice; it is accepted.
	Register(Platform{
		ID: "huawei_smartax", Name: "Huawei SmartAX (OLT)", Vendor: "Huawei",
		Aliases:         []string{"smartax"},
		DefaultCommands: lines("display current-configuration"),
		Dialogue: Dialogue{
			Prompt:         re(`^[\w.\-]{1,64}(\([\w.\-/]{1,40}\))?[>#]$`),
			Pager:          re(`(?i)-{2,} ?more \( ?press 'q' to break ?\) ?-{2,}$`),
			PagingOff:      []string{"undo smart", "undo interactive", "infoswitch cli OFF", "scroll"},
			Enable:         "enable",
			Privileged:     privileged,
			PasswordPrompt: passwordQ,
			EnableFailed:   enableFailed,
			// "% Unknown command, the error locates at '^'", "% Parameter
			// error, …", "% Incomplete command, …".
			CommandError: re(`^\s*%\s?(Unknown command|Parameter error|Incomplete command|Too many parameters|Ambiguous)`),
			PreLogin:     []Answer{{Match: re(`\(YES/NO\)\s*[:?]?$`), Send: "yes\n"}},
		},
		// The first line names the release: "[MA5800V100R019: 8101]".
		Noise:   []string{`^\[MA\d{4}V\d{3}R\d{3}\S*: \d+\]$`},
		Secrets: smartaxSecrets,
		Notes: "Runs enable (no password on most releases) and turns smart parameter prompts, confirmations and paging " +
			"off for the session.",
	})
}

// smartaxSecrets are the secrets of SmartAX `display current-configuration`:
// terminal users' password hashes (and their history) between "*" and
// "$*", the SNMP community as quoted cipher text ("%+%#…%+%#", quotes
// inside), ONT authentication passwords, and keys as wrapped cipher text
// (a RADIUS "shared-key-cipher %^%#…%^%#"). ONT serial numbers ("sn-auth")
// identify the ONT and stay.
var smartaxSecrets = []SecretRule{
	// " terminal user name buildrun_new_password root *j$3b$…$* 7 …".
	{Name: "terminal user password", Match: `^\s*terminal user name (?:(?:buildrun_new_password|history_password) )?\S+ ` +
		`(?:(?P<secret>\*.*?\$\*)|(?P<secret>[^\s*]\S*))(?: |$)`},
	// The quoted form may hold quotes: everything to the line's last
	// quote is the community.
	{Name: "SNMP community", Match: `^\s*snmp-agent community (?:read|write) (?:cipher )?(?:"(?P<secret>.*)"|` + vrpValue + `)`},
	{Name: "ONT password", Match: `\b(?:password-auth|checkcode) (?:"(?P<secret>[^"]*)"|` + vrpValue + `)`},
	vrpCipherText(),
}
