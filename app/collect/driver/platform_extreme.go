package driver

func init() {
	// EXOS: "X440G2.5 # ", "* X440G2.6 # " once the configuration is
	// unsaved, "Slot-1 Stack.3 # " on stacks; the counter changes with
	// every command. "disable clipaging" lasts for the session. Noise: when
	// the file was generated and by which release; the "# Module …
	// configuration." section headers never change and stay.
	Register(Platform{
		ID: "extreme_exos", Name: "Extreme EXOS", Vendor: "Extreme Networks",
		Aliases:         []string{"exos", "xos", "extreme"},
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

func init() {
	// Extreme VOSS (VSP 4000/7200/7400/8000, formerly Avaya): "VSP-8284:1>"
	// (the number is the CPU slot), `enable` to "VSP-8284:1#" (no
	// password: the login's access level decides), `terminal more disable`
	// for the session, `show running-config`. The listing opens with
	// "Preparing to Display Configuration..." (kept: it never changes) and
	// a header whose date changes at every show and whose software version
	// changes with upgrades.
	voss := cisco()
	voss.Prompt = re(`^[\w.\-]{1,64}:\d{1,2}(\([\w.\-/]{1,40}\))?[>#]$`)
	voss.PagingOff = []string{"terminal more disable"}
	voss.Pager = re(`(?i)-{2,}more \(q=quit, space/return=continue.*\)-{2,}$`)
	Register(Platform{
		ID: "extreme_voss", Name: "Extreme VOSS (VSP)", Vendor: "Extreme Networks",
		Aliases:         []string{"voss", "extreme_vsp", "vsp"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        voss,
		Noise: []string{
			`^# [A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}( \S+)?$`,
			`^# software version\s+: `,
		},
	})
}
