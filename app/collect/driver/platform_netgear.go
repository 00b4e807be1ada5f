package driver

func init() {
	// Netgear ProSAFE managed switches (M4100/M4300/M5300, FASTPATH) log
	// in at "(M4300-52G) >" and need "enable"; the Smart Managed Pro
	// models (GS752TPP in the recording) log in straight at "19sw011#"
	// after clearing the screen. One prompt pattern serves both.
	d := fastpath()
	d.Prompt = re(`^(\([\w.\-/ ]{1,64}\)|[\w.\-/]{1,64}) ?(\([\w.\-/ ]{1,40}\) ?)?[>#]$`)
	Register(Platform{
		ID: "netgear_prosafe", Name: "Netgear ProSAFE", Vendor: "Netgear",
		Aliases:         []string{"netgear"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        d,
		Noise:           fastpathNoise,
		Secrets:         fastpathSecrets,
		Notes: "Managed (FASTPATH) models log in at \">\" and run \"enable\" with the enable password; " +
			"Smart Managed Pro models log in privileged. Passwords and SNMP users appear encrypted, as the switch stores them.",
	})
}
