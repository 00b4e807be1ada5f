package driver

// FS.com (Fiberstore) switches: FSOS on the S3400/S3900 campus switches
// and on the Centec-based S5850/S8050 data-centre switches, whose sessions
// Oxidized records under its "cnos" model (Centec CNOS; not Lenovo's).

// fsError: the Centec-based models print Cisco's "% Invalid input
// detected at '^' marker."; no recording shows the S3400's refusal, so the
// other "%" forms of this family are taken as well.
var fsError = re(`^\s*% ?(Invalid input|Incomplete command|Ambiguous command|Unknown command|Unrecognized command|Error)`)

func init() {
	// Administrators land in "#" (the S3400 recording); operator logins
	// get ">" and "enable". "terminal length 0" and "terminal width 0"
	// last for the session; older S5850 releases lack the width command,
	// which is tolerated. The pager is " --More-- ".
	d := cisco()
	d.PagingOff = []string{"terminal length 0", "terminal width 0"}
	d.CommandError = fsError
	Register(Platform{
		ID: "fs_os", Name: "FS.com FSOS", Vendor: "FS.com",
		Aliases:         []string{"fsos"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        d,
		// "Building configuration..." is the device telling what it does,
		// not configuration (kept in the text, as for IOS).
		Noise: []string{`^Building configuration\.\.\.$`},
		Notes: "S3400/S3900 and the Centec-based S5850/S8050 series. Passwords and keys appear as the switch " +
			"stores them (type 7 with service password-encryption).",
	})
}
