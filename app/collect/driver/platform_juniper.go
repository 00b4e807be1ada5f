package driver

import "regexp"

// juniperPromptLines are the lines Junos prints above its prompt:
// routing-engine or cluster role and the configuration level. PAN-OS and
// VyOS print the same "[edit]".
var juniperPromptLines = re(`^(\{[\w:\-]+\}|\[edit[^\]]*\])$`)

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
		Noise: []string{`^Total Config size \d+:$`},
	})
}
