package driver

func init() {
	// EXOS: "X440G2.5 # ", "* X440G2.6 # " once the configuration is
	// unsaved, "Slot-1 Stack.3 # " on stacks; the counter changes with
	// every command. "disable clipaging" lasts for the session. Noise: when
	// the file was generated and by which release; the "# Module …
	// configuration." section headers never change and stay.
	Register(Platform{
		ID: "extreme_exos", Name: "Extreme EXOS", Vendor: "Extreme Networks",
		Aliases:         []string{"exos", "xos"},
		DefaultCommands: lines("show configuration"),
		Dialogue: Dialogue{
			Prompt:         re(`^(\* )?(\([^)]*\) )?([\w\-]+ )?[\w.\-]+\.\d+ ?[#>]$`),
			PromptVolatile: re(`^\* |\.\d+ ?`),
			Pager:          re(`Press <SPACE> to continue or <Q> to quit:$`),
			PagingOff:      []string{"disable clipaging"},
			CommandError:   re(`^\s*(%% ?(Invalid|Incomplete|Ambiguous|Unrecognized)|Error:)`),
		},
		Noise: []string{
			`^#\s.*[Cc]onfiguration generated `,
			`^# Software Version \S+`,
		},
	})
}
