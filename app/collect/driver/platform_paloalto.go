package driver

import "regexp"

func init() {
	// PAN-OS: "admin@PA-VM>", with the HA state in brackets on pairs. Its
	// output changes only when the configuration does.
	Register(Platform{
		ID: "paloalto_panos", Name: "Palo Alto PAN-OS", Vendor: "Palo Alto Networks",
		Aliases:         []string{"panos", "paloalto"},
		DefaultCommands: lines("show config running"),
		Dialogue: Dialogue{
			Prompt:       re(`^[\w.\-]+@[\w.\-]+(\([\w.\-]+\))?[>#]$`),
			PromptLines:  juniperPromptLines,
			Pager:        re(`^lines \d+-\d+`),
			PagingOff:    []string{"set cli pager off"},
			CommandError: re(`^\s*(Unknown command:|Invalid syntax\.|Server error)`),
		},
		Syslog: []SyslogPattern{{
			// CONFIG log (CSV): ...,CONFIG,<subtype>,<future>,<generated>,
			// <host>,<vsys>,<command>,<admin>,<client>,<result>,... A commit
			// is when the running configuration changes; set/edit only touch
			// the candidate.
			Name:    "panos-config-commit",
			Needles: []string{",CONFIG,"},
			Match:   regexp.MustCompile(`,CONFIG,(?:[^,]*,){5}commit,[^,]*,[^,]*,(?:Submitted|Succeeded)\b`),
		}},
	})
}
