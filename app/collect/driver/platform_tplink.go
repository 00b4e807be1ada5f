package driver

func init() {
	// TP-Link JetStream (T1600/T2600/SG3xxx and the DeltaStream OLTs):
	// "switch>" then "enable" to "switch#"; commands must end in a
	// carriage return (a bare line feed is not taken as Enter on some
	// firmware); "terminal length 0" where the firmware has it, otherwise
	// "Press any key to continue (Q to quit)" is answered. The prompt is
	// redrawn after "\r", which the cleanup absorbs.
	d := cisco()
	d.PagingOff = []string{"terminal length 0"}
	d.Pager = re(`(?i)^press\s?any\s?key\s?to\s?continue\s?\(q\s?to\s?quit\)$`)
	d.LineEnd = "\r\n"
	d.CommandError = re(`^\s*(% ?(Invalid input|Incomplete command|Ambiguous command|Unrecognized command|Bad command)|Error: ?(Bad command|Invalid|Incomplete|Unknown))`)
	Register(Platform{
		ID: "tplink_jetstream", Name: "TP-Link JetStream", Vendor: "TP-Link",
		Aliases:         []string{"tplink"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        d,
		Notes: "Logs in at \">\" and runs \"enable\" when the user is not privileged. User passwords appear " +
			"as stored (\"secret 5\"); the running configuration carries no clock or uptime.",
	})
}
