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
		Secrets:         jetstreamSecrets,
		Notes: "Logs in at \">\" and runs \"enable\" when the user is not privileged. User passwords appear " +
			"as stored (\"secret 5\"); the running configuration carries no clock or uptime.",
	})
}

// jetstreamSecrets are the secrets of JetStream configurations: user and
// enable passwords ("secret 5 …" hashes, "password 0 …" clear), SNMP
// communities (also in trap hosts) and SNMPv3 passwords ("cpwd",
// "epwd"), and RADIUS and TACACS+ keys.
var jetstreamSecrets = []SecretRule{
	// "user name admin privilege admin secret 5 …"; older firmware's
	// "user admin password … privilege admin".
	{Name: "user password", Match: `^user (?:name )?\S+ (?:\S+ )*?(?:password|secret) ` + secretTyped},
	{Name: "enable password", Match: `^enable (?:password|secret) ` + secretTyped},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	// "snmp-server host IP PORT NAME smode v2c …": NAME is the community
	// for v1 and v2c (a user for v3).
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ \d+ ` + secretValue + ` smode v(?:1|2c)\b`},
	{Name: "SNMPv3 passwords", Match: `^snmp-server user \S+ (?:local|remote) \S+ (?:\S+ )*?cpwd ` + secretValue +
		`(?: (?:\S+ )*?epwd ` + secretValue + `)?`},
	{Name: "RADIUS/TACACS+ key", Match: `^(?:radius|tacacs)-server (?:\S+ )*?key ` + secretTyped},
}
