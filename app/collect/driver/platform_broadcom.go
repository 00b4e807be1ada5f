package driver

// Broadcom FASTPATH / EFOS and the switches built on it (Netgear ProSAFE
// managed switches, Ubiquiti EdgeSwitch, Broadcom's own EFOS on NetApp
// cluster switches).

// fastpathPrompt: "(Metro_Switch_A_1)>", "(Metro_Switch_A_1) #",
// "(UBNT EdgeSwitch) >", "(M4300-52G) (Config)#" — the system name in
// parentheses (it may hold spaces), then the mode in parentheses when
// configuring.
var fastpathPrompt = re(`^\([\w.\-/ ]{1,64}\) ?(\([\w.\-/ ]{1,40}\) ?)?[>#]$`)

// fastpathError: "% Invalid input detected at '^' marker.", "Command not
// found / Incomplete command. Use ? to list commands.", "An invalid
// interface has been used for this function."
var fastpathError = re(`^\s*(% ?(Invalid input|Incomplete command|Ambiguous command|Unrecognized command)|` +
	`Command not found|Incomplete command\. Use \?|An invalid interface has been used)`)

// fastpath is the FASTPATH dialogue (pager: fastpathPager, "--More-- or
// (q)uit", shared with AireOS): the login lands in ">" and "enable"
// asks for a password (which may be empty on these switches, but backupd
// can only answer one that is set), "terminal length 0" lasts for the
// session.
func fastpath() Dialogue {
	return Dialogue{
		Prompt:         fastpathPrompt,
		Pager:          fastpathPager,
		PagingOff:      []string{"terminal length 0"},
		Enable:         "enable",
		Privileged:     privileged,
		PasswordPrompt: passwordQ,
		EnableFailed:   enableFailed,
		CommandError:   fastpathError,
	}
}

// fastpathNoise: the header of "show running-config" carries the uptime
// and the clock ("!System Up Time          "146 days 23 hrs 39 mins 1
// secs"", "!Current System Time: Apr  8 13:30:29 2025", "!Current SNTP
// Synchronized Time: …"), which move at every show; Netgear's smart
// switches write "! System Up Time: 123 days, …" with a blank.
var fastpathNoise = []string{
	`^! ?System Up Time\b`,
	`^! ?Current System Time:`,
	`^! ?Current SNTP Synchronized Time:`,
}

func init() {
	// EFOS is FASTPATH as Broadcom ships it (NetApp BES-53248 cluster
	// switches): same prompt, enable and paging. The recording shows the
	// login at ">" and an enable without a password question. Quanta's
	// LB-series switches run FASTPATH too (Oxidized's quantaos: the same
	// "(name) >" prompt, enable and "terminal length 0").
	Register(Platform{
		ID: "broadcom_efos", Name: "Broadcom EFOS (FASTPATH)", Vendor: "Broadcom",
		Aliases:         []string{"efos", "fastpath", "quantaos"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        fastpath(),
		Noise:           fastpathNoise,
		Notes: "Also Quanta LB-series switches (FASTPATH). Logs in at \">\" and runs \"enable\"; set the enable password on the device " +
			"credential when the switch asks for one. The configuration shows passwords encrypted, as the switch stores them.",
	})
}
