package driver

// SonicWall SonicOS 6.5 and 7 (NSa, TZ, NSv): SSH only. The prompt is
// "user@serial> " ("admin@C0EAE4123456> ", "admin@host-with-minus> ",
// Oxidized's prompt examples) and "config(C0EAE4123456)# " in
// configuration mode. `no cli pager session` turns the pager off for the
// session only; `show current-config` prints the configuration as CLI
// commands.
func init() {
	Register(Platform{
		ID: "sonicwall_sonicos", Name: "SonicWall SonicOS", Vendor: "SonicWall",
		Aliases:         []string{"sonicos", "sonicwall"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("show current-config"),
		Dialogue: Dialogue{
			Prompt:       re(`^([\w.\-]{1,64}@[\w.\-]{1,64}|config\([\w.\-]{1,64}\))[>#]$`),
			Pager:        re(`(?i)--\s?more\s?--$`),
			PagingOff:    []string{"no cli pager session"},
			CommandError: re(`^\s*(% ?(Unknown|Invalid|Incomplete|Ambiguous|Command)|Error: )`),
		},
		// Lines Oxidized's sonicos model drops for the same reason: the
		// clock, the uptime and the checksum move while the settings stay.
		Noise: []string{
			`^\s*system-time "\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2}(\.\d+)?"$`,
			`^\s*system-uptime "`,
			`^\s*checksum \d+$`,
		},
		Notes: "SSH only. The administrator account is needed for show current-config.",
	})
}
