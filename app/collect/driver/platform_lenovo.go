package driver

func init() {
	// Lenovo CNOS (Cloud Network OS, ThinkSystem NE and RackSwitch G8xxx
	// with CNOS): an IOS-like command line, "NE2572>" then "enable" to
	// "NE2572#", "terminal length 0", "show running-config". Oxidized's
	// "cnos" model is written for Centec CNOS (FS.com S5850, see fs_os),
	// whose dialogue is the same; imports that name "cnos" land here and
	// work for both. Errors, as Ansible's CNOS terminal plugin lists
	// them: "% Error…", "% Bad secret", "Invalid input", "Incomplete
	// command", "Ambiguous command".
	d := cisco()
	d.PagingOff = []string{"terminal length 0"}
	d.CommandError = re(`^\s*% ?(Invalid input|Incomplete command|Ambiguous command|Unrecognized command|Error|Bad secret)`)
	Register(Platform{
		ID: "lenovo_cnos", Name: "Lenovo CNOS", Vendor: "Lenovo",
		Aliases:         []string{"cnos"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        d,
		Notes: "Logs in at \">\" and runs \"enable\" when the user is not privileged. " +
			"The public recording under Oxidized's \"cnos\" model is an FS.com S5850 (Centec CNOS): it proves fs_os, " +
			"and replays through this platform too, but no Lenovo switch has been recorded.",
	})
}
