package driver

func init() {
	// Ubiquiti EdgeSwitch (not EdgeRouter, which is ubiquiti_edgeos) runs
	// FASTPATH: "(UBNT EdgeSwitch) >", "enable" with a password question
	// that an empty Enter answers on a new switch, "terminal length 0",
	// "--More-- or (q)uit". The running configuration starts with the
	// uptime and the SNTP time, which change at every show. RANCID calls
	// it edgemax (Ubiquiti's name for the switch line).
	Register(Platform{
		ID: "ubiquiti_edgeswitch", Name: "Ubiquiti EdgeSwitch", Vendor: "Ubiquiti",
		Aliases:         []string{"edgeswitch", "edgemax"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        fastpath(),
		Noise:           fastpathNoise,
		Secrets:         fastpathSecrets,
		Notes: "Logs in at \">\" and runs \"enable\"; give the device credential an enable password. " +
			"Proven on the simulator only: no public recording of an EdgeSwitch session exists.",
	})
}
