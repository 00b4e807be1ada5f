package driver

import (
	"regexp"
	"time"
)

// juniperPromptLines are the lines Junos prints above its prompt:
// routing-engine or cluster role and the configuration level. PAN-OS and
// VyOS print the same "[edit]".
var juniperPromptLines = re(`^(\{[\w:\-]+\}|\[edit[^\]]*\])$`)

// junosValue is a value of a Junos statement, in braces ("…;") or as a
// `display set` command (the line's end): quoted, only its inside masked,
// or a bare word.
const junosValue = `(?:"(?P<secret>[^"]*)"|(?P<secret>[^\s";{}]+))(?:;|$)`

// junosSecrets are the secrets of Junos configurations, in braces or
// `display set` commands. Junos stores every password and key it can as
// "$9$…" (reversible) or a crypt hash ($1$, $5$, $6$) and tags the line
// "## SECRET-DATA" in braces; SNMP communities (and trap groups, whose
// names are the traps' community) and passwords in archive URLs are in
// clear.
var junosSecrets = []SecretRule{
	{Name: "user password hash", Match: `(?:^|\s)encrypted-password ` + junosValue},
	{Name: "authentication key", Match: `(?:^|\s)(?:hello-)?authentication-key ` + junosValue},
	{Name: "NTP key", Match: `(?:^|\s)authentication-key \d+ (?:type \S+ )?value ` + junosValue},
	{Name: "RADIUS/TACACS+ or key-chain secret", Match: `(?:^|\s)secret ` + junosValue},
	{Name: "IKE pre-shared key", Match: `(?:^|\s)pre-shared-key (?:ascii-text|hexadecimal) ` + junosValue},
	{Name: "OSPF/IS-IS password", Match: `(?:^|\s)(?:simple-password|md5 \d+ key) ` + junosValue},
	{Name: "SNMPv3 privacy key", Match: `(?:^|\s)privacy-key ` + junosValue},
	{Name: "MACsec CAK", Match: `(?:^|\s)cak ` + junosValue},
	{Name: "PPP password", Match: `(?:^|\s)(?:default-chap-secret|chap-secret|local-password|default-pap-password) ` + junosValue},
	// "community NAME {" or "community NAME;" of the snmp stanza (4
	// spaces in, 12 in a group), "set snmp community NAME …". One line does
	// not tell an SNMP community from a policy-options community defined
	// with a block, which is masked as well; "community NAME members …"
	// and a policy term's "community NAME;" (deeper) stay.
	{Name: "SNMP community", Match: `^(?: {4}| {12})community (?:"(?P<secret>[^"]*)"|(?P<secret>[^\s";{}]+))(?: \{|;)$|` +
		`^set (?:groups \S+ )?snmp (?:routing-instance \S+ )?community (?:"(?P<secret>[^"]*)"|(?P<secret>[^\s"]+))(?: |$)`},
	{Name: "SNMP trap group (community)", Match: `^(?: {4}| {12})trap-group (?:"(?P<secret>[^"]*)"|(?P<secret>[^\s";{}]+))(?: \{|;)$|` +
		`^set (?:groups \S+ )?snmp trap-group (?:"(?P<secret>[^"]*)"|(?P<secret>[^\s"]+))(?: |$)`},
	{Name: "password in URL", Match: `(?:s?ftp|pasvftp|scp|https?)://[^/@:"\s]+:(?P<secret>[^@"\s]+)@`},
	// Any other quoted "$9$…" (reversible) or "$8$…" (encrypted with the
	// master password), in either form.
	{Name: "encrypted value ($9$, $8$)", Match: `"(?P<secret>\$9\$[^"]*)"|"(?P<secret>\$8\$[^"]*)"`},
	// Whatever else Junos tags secret in braces, but SSH public keys
	// (`ssh-rsa "ssh-rsa AAAA… user"`), which are public.
	{Name: "value tagged SECRET-DATA", Match: `(?:"(?:ssh-|ecdsa-|sk-)[^"]*"|"(?P<secret>[^"]*)"|(?P<secret>[^\s";]+)); ## SECRET-DATA`},
}

func init() {
	// Junos over SSH: one exec request per command runs the CLI without a
	// terminal, so nothing pages and no prompt is printed. Over telnet the
	// interactive CLI is used. The header stamps the last change and
	// commit; a commit without changes moves the stamp too. RANCID's
	// junos-evo (Junos OS Evolved) and juniper-srx types are this CLI
	// too; RANCID only splits their hardware listings.
	Register(Platform{
		ID: "juniper_junos", Name: "Juniper Junos", Vendor: "Juniper",
		Aliases:         []string{"junos", "juniper", "junos-evo", "juniper-srx"},
		DefaultCommands: lines("show configuration | display omit"),
		Dialogue: Dialogue{
			Exec:        true,
			Prompt:      re(`^[\w.\-]+@[\w.\-]+[>#]$`),
			PromptLines: juniperPromptLines,
			Pager:       re(`---\(more( \d+%)?\)---$`),
			PagingOff:   []string{"set cli screen-length 0", "set cli screen-width 0"},
			// "not found": a root login lands in the Unix shell, not the CLI.
			CommandError: re(`^\s*(error:|unknown command\.|syntax error)|command not found|: not found$`),
		},
		Noise: []string{
			`^## Last changed: `,
			`^## Last commit: `,
		},
		// Restores over the interactive CLI (configure exclusive, load
		// override terminal, commit check, commit confirmed, commit), as
		// the login class allows: it needs the configure, rollback and
		// secret-control permissions, and secret to back up the keys.
		// Junos prints "error: ..." for a refused command, "terminal:N:(M)
		// syntax error: ..." and "load complete (N errors)" for lines of a
		// load it did not take, and keeps the rest in the candidate.
		Restore: Restore{
			Method:      "junos_commit_confirmed",
			ConfigEnter: []string{"configure exclusive"},
			ConfigExit:  []string{"exit configuration-mode"},
			ApplyError:  re(`^\s*error:|syntax error|^load complete \(\d+ errors?\)|^load failed`),
			Timer:       ConfirmTimer{Default: 5 * time.Minute, Min: time.Minute, Max: 65535 * time.Minute},
		},
		Secrets: junosSecrets,
		Syslog: []SyslogPattern{{
			// "mgd[4410]: UI_COMMIT: User 'netops' requested 'commit'
			// operation ..." and "UI_COMMIT_COMPLETED: commit complete"; in
			// RFC 5424 mode the tag is the MSGID. UI_COMMIT_PROGRESS (many
			// per commit) does not match.
			Name:    "junos-ui-commit",
			Needles: []string{"UI_COMMIT"},
			Match:   regexp.MustCompile(`\bUI_COMMIT(?:_COMPLETED)?\b`),
		}},
	})

	// ScreenOS: "set console page 0" is a configuration command (it would
	// show up in the running configuration), so the pager is answered.
	// `get config` starts with its size.
	Register(Platform{
		ID: "juniper_screenos", Name: "Juniper ScreenOS", Vendor: "Juniper",
		Aliases:         []string{"screenos", "netscreen"},
		DefaultCommands: lines("get config"),
		Dialogue: Dialogue{
			Prompt:       re(`^[\w.\-]+(\([\w.\-]+\))?->$`),
			Pager:        re(`(?i)--- ?more ?---$`),
			CommandError: re(`^\s*(unknown keyword|Unknown command|command not completed)`),
		},
		Noise:   []string{`^Total Config size \d+:$`},
		Secrets: screenosSecrets,
	})
}

// screenosSecrets are the secrets of ScreenOS `get config`: every value
// is quoted, passwords and keys encrypted by the device. Only quoted
// values are taken after the common words, so that "set admin password
// restrict length 8" and the "preshare" method of a P1 proposal stay.
var screenosSecrets = []SecretRule{
	{Name: "admin password", Match: `^set admin (?:user \S+ )?password "(?P<secret>[^"]*)"`},
	{Name: "local user password", Match: `^set user \S+ (?:hash-password|password) "(?P<secret>[^"]*)"`},
	// "set snmp community "NAME" Read-Write …"; "set snmp host "NAME"
	// 10.0.0.5 …" names the community its traps carry.
	{Name: "SNMP community", Match: `^set snmp (?:community|host) "(?P<secret>[^"]*)"`},
	{Name: "IKE pre-shared key", Match: `\bpreshare "(?P<secret>[^"]*)"`},
	{Name: "RADIUS/TACACS+ secret", Match: `^set auth-server \S+ (?:radius|tacacs) secret "(?P<secret>[^"]*)"`},
	{Name: "NTP key", Match: `^set ntp server key-id \d+ preshare-key "(?P<secret>[^"]*)"`},
	{Name: "OSPF/BGP authentication", Match: `\b(?:ospf authentication (?:md5|password)|md5-authentication) "(?P<secret>[^"]*)"`},
}
