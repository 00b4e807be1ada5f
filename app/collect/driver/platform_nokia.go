package driver

import "regexp"

// Nokia SR OS (TiMOS: 7750 SR, 7450 ESS, 7950 XRS, 7705 SAR, 7210 SAS).
//
// SR OS has two command-line engines. The classic CLI prompts
// "A:router#" (B: on the standby CPM, "*A:router#" with unsaved changes,
// "A:router>config>router#" in a context) and prints the configuration
// with `admin display-config`. The model-driven CLI (MD-CLI) prompts on
// two lines, the context and then the prompt with the user:
//
//	[/]
//	A:admin@router#
//
// ("(ex)[/configure]" and "*(ex)[/]" while editing). A node in "mixed"
// configuration mode offers both, and /!classic-cli switches a session to
// the classic engine explicitly (where // would only toggle). So the
// session turns paging off in whichever engine it lands in, switches to
// the classic engine, turns paging off there, and runs the classic
// command: each of these that the engine in use does not know is
// rejected, which Start tolerates. A node in pure model-driven mode has no
// classic `admin display-config`; its devices need a template with
// `admin show configuration` (see Notes).
var (
	srosPrompt = re(`^\*?[A-D]:[\w.@\-]{1,64}(>[\w.\-]{1,40}){0,10}[#$]$`)
	// srosContext is the MD-CLI context line above its prompt, with the
	// configuration-mode and "changed" marks.
	srosContext = re(`^[*!]{0,2}(\((ex|gl|pr|ro|bt)\))?\[[^\[\]]{0,200}\]$`)
	// srosError: classic "Error: Bad command.", "MINOR: CLI Command not
	// allowed …"; MD-CLI "MINOR: MGMT_CORE #2201: Unknown element - 'x'".
	srosError = re(`^\s*(Error: |(MINOR|MAJOR|CRITICAL): )`)
)

// srosSecrets are the secrets of SR OS configurations: any quoted value
// marked "hash" or "hash2" (passwords, authentication keys of OSPF,
// IS-IS, BGP, LDP, RSVP and VRRP, RADIUS and TACACS+ secrets, key-chain
// keys, IPsec pre-shared keys), local users' password hashes (bcrypt or
// PBKDF2, quoted, no mark), SNMP communities (classic "community "x" r
// version both"; the MD-CLI's "snmp community "x"") and SNMP trap
// communities, and those of the above written in clear.
var srosSecrets = []SecretRule{
	{Name: "hashed secret", Match: `"(?P<secret>[^"]*)" hash2?(?: |$)`},
	{Name: "user password", Match: `^\s+(?:admin-)?password "(?P<secret>[^"]*)"`},
	{Name: "SNMP community", Match: `^\s+community "(?P<secret>[^"]*)" (?:r|rw|rwa|mgmt|vpls-mgmt)\b`},
	{Name: "SNMP community (MD-CLI)", Match: `\bsnmp community "(?P<secret>[^"]*)"`},
	{Name: "SNMP trap community", Match: `\bnotify-community "(?P<secret>[^"]*)"`},
	{Name: "RADIUS/TACACS+ secret", Match: `\bsecret "(?P<secret>[^"]*)"`},
	{Name: "authentication key", Match: `\b(?:authentication-key|message-digest-key \d+ md5|pre-shared-key) "(?P<secret>[^"]*)"`},
}

// Oxidized's srosmd model and RANCID's sros-md type are SR OS with the
// MD-CLI: the same platform.
func init() {
	Register(Platform{
		ID: "nokia_sros", Name: "Nokia SR OS", Vendor: "Nokia",
		Aliases:         []string{"sros", "srosmd", "sros-md", "timos", "alcatel_sros"},
		DefaultCommands: lines("admin display-config"),
		Secrets:         srosSecrets,
		Dialogue: Dialogue{
			Prompt: srosPrompt,
			// The unsaved-changes mark comes and goes between commands.
			PromptVolatile: re(`^\*`),
			PromptLines:    srosContext,
			// Classic "Press any key to continue (Q to quit)"; MD-CLI
			// "-- More --" style.
			Pager:        re(`(?i)(press any key to continue \(q to quit\)|-- ?more ?--.*)$`),
			PagingOff:    []string{"environment more false", "/!classic-cli", "environment no more"},
			CommandError: srosError,
		},
		// admin display-config opens with the release that wrote it and
		// two timestamps: when the listing was generated and finished.
		Noise: []string{
			`^# Generated [A-Z]{3} [A-Z]{3} `,
			`^# Finished [A-Z]{3} [A-Z]{3} `,
			`^# TiMOS-\S+ `,
			`^# Built on `,
		},
		Syslog: []SyslogPattern{
			{
				// The configuration events of TIMETRA-SYSTEM-MIB
				// (tmnxConfigModify/Create/Delete, SYSTEM #2006-2008 and
				// their SECURITY twins), as syslog sends them:
				// "TMNX: 5678 Base SYSTEM-MINOR-tmnxConfigModify-2006 […]".
				Name:    "sros-config-event",
				Needles: []string{"tmnxConfig"},
				Match:   regexp.MustCompile(`\b(?:SYSTEM|SECURITY)-[A-Z]+-tmnxConfig(?:Modify|Create|Delete)-\d+\b`),
			},
			{
				// Command accounting of configuration mode:
				// "USER-WARNING-cli_config_io-2011 [user]: User from
				// 198.51.100.142: host>config>system# ptp". Navigation and
				// display commands change nothing.
				Name:    "sros-cli-config-io",
				Needles: []string{"cli_config_io"},
				Match:   regexp.MustCompile(`\bUSER-[A-Z]+-cli_config_io-\d+\b`),
				Exclude: regexp.MustCompile(`[#$]\s+(?:exit|back|info|show|pwc|tree|environment)(?:\s|$)`),
			},
		},
		Notes: "Collects the classic CLI's admin display-config; a session that lands in the MD-CLI (mixed mode) is switched to " +
			"the classic engine with /!classic-cli first. Nodes in pure model-driven mode need a template with " +
			"\"admin show configuration\" instead.",
	})
}
