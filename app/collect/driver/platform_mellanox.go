package driver

func init() {
	// NVIDIA Mellanox Onyx (MLNX-OS): " [standalone: master] >",
	// "MLNX01-1 [MLNX01: standby] >", "switch [mlag: master] (config) #";
	// "enable" rarely asks for a password. "no cli session paging enable"
	// lasts for the session; the pager is less-like, "lines 1-23" and
	// "lines 256-269/269 (END)". Output is wrapped in keypad-mode escapes
	// and NULs, which the cleanup drops.
	Register(Platform{
		ID: "mellanox_onyx", Name: "NVIDIA Mellanox Onyx", Vendor: "NVIDIA Mellanox",
		Aliases:         []string{"mlnxos", "onyx"},
		DefaultCommands: lines("show running-config"),
		Dialogue: Dialogue{
			Prompt:         re(`^([\w.\-]{1,64} )?\[[\w.\-]{1,64}: [\w\-]{1,16}\]( \([\w.\-/ ]{1,40}\))? ?[>#]$`),
			Pager:          re(`^lines \d+-\d+(/\d+ \(END\))?$`),
			PagingOff:      []string{"no cli session paging enable"},
			Enable:         "enable",
			Privileged:     privileged,
			PasswordPrompt: passwordQ,
			EnableFailed:   enableFailed,
			CommandError:   re(`^\s*% ?(Unrecognized command|Incomplete command|Ambiguous command|Invalid|Unknown)`),
		},
		// "## Generated at 2025/03/31 08:48:03 -0400" is the time of the show.
		Noise: []string{`^## Generated at \d{4}/\d{2}/\d{2} `},
		Notes: "Logs in at \">\" and runs \"enable\". Local user passwords appear hashed, as the switch stores them.",
	})
}
