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
		Noise:   []string{`^## Generated at \d{4}/\d{2}/\d{2} `},
		Secrets: onyxSecrets,
		Notes:   "Logs in at \">\" and runs \"enable\". Local user passwords appear hashed, as the switch stores them.",
	})
}

// onyxSecrets are the secrets of Onyx (MLNX-OS) configurations, whose
// lines are indented three blanks: local user password hashes ("password
// 7 $6$…"), SNMP communities (also in trap hosts) and SNMPv3 keys, BGP
// neighbor passwords and OSPF keys. Onyx prints the RADIUS, TACACS+ and
// LDAP keys itself as a comment ("# tacacs-server key ********"), which
// stays as it is.
var onyxSecrets = []SecretRule{
	{Name: "local user password", Match: `^ *username \S+ password (?:[07] )?` + secretValue},
	{Name: "SNMP community", Match: `^ *snmp-server community ` + secretValue},
	// A v1 or v2c host: the community ends the line (a v3 host names a
	// user and goes on with its keys).
	{Name: "SNMP trap community", Match: `^ *snmp-server host \S+ (?:traps|informs)(?: port \d+)?(?: version (?:1|2c))?(?: port \d+)? ` +
		secretValue + `$`},
	// "snmp-server user NAME v3 [encrypted] auth sha KEY priv aes-128 KEY",
	// and a v3 trap host's user keys.
	{Name: "SNMPv3 keys", Match: `^ *snmp-server (?:user \S+ v3|host \S+ (?:traps|informs)(?: port \d+)? version 3 user \S+)(?: encrypted)? auth (?:md5|sha\d*) ` +
		secretValue + `(?: priv (?:des|3des|aes-?\d+) ` + secretValue + `)?`},
	{Name: "BGP neighbor password", Match: `^ *router bgp \S+(?: vrf \S+)? neighbor \S+ password (?:[07] )?` + secretValue},
	{Name: "OSPF key", Match: `^ *interface \S+ \S+ ip ospf (?:authentication-key|message-digest-key \d+ md5) (?:[07] )?` + secretValue},
}
