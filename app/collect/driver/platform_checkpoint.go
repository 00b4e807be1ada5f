package driver

// gaiaSecrets are the secrets of Gaia clish `show configuration`: users'
// and expert mode password hashes, SNMP communities and SNMPv3
// pass-phrase hashes, RADIUS/TACACS+ secrets and routing authentication
// secrets, in clear.
var gaiaSecrets = []SecretRule{
	{Name: "user password hash", Match: `^set user \S+ password-hash ` + secretValue},
	{Name: "expert password hash", Match: `^set expert-password-hash ` + secretValue},
	{Name: "SNMP community", Match: `^(?:set|add) snmp community ` + secretValue + ` (?:read-only|read-write)`},
	{Name: "SNMP trap community", Match: `^(?:set|add) snmp traphost \S+ (?:\S+ )*?community ` + secretValue},
	{Name: "SNMPv3 pass-phrases", Match: `(?:^|\s)(?:auth|privacy)-pass-phrase(?:-hashed)? ` + secretValue},
	// "prompt-secret 0 secret …": "prompt-secret" is no secret.
	{Name: "RADIUS/TACACS+ secret", Match: `^add aaa (?:radius|tacacs)-servers .*?\s(?:secret|key) ` + secretValue},
	{Name: "routing authentication", Match: `^set (?:ospf|ospf3|bgp|rip|vrrp|mcvr) .*?\s(?:secret|password) ` + secretValue},
}

func init() {
	// Check Point Gaia: the account's shell must be clish (/etc/cli.sh),
	// whose prompt is the hostname with ">" ("gw-01>", on VSX "gw-01:0>");
	// expert mode ("[Expert@gw-01:0]#") is not needed. "set clienv rows
	// 0" turns the pager off for the session. "show configuration" is the
	// whole Gaia OS configuration as clish commands, user password hashes
	// included; its header carries the export time, which changes at
	// every show. Errors look like "CLINFR0329  Invalid command:'show x'.".
	// Written from Check Point's Gaia Administration Guide (R81); no
	// public capture.
	Register(Platform{
		ID: "checkpoint_gaia", Name: "Check Point Gaia", Vendor: "Check Point",
		Aliases:         []string{"gaiaos"},
		DefaultCommands: lines("show configuration"),
		Dialogue: Dialogue{
			Prompt:       re(`^[\w.\-]+(:\d{1,3})?[>#]$`),
			Pager:        re(`^-- ?More ?--$`),
			PagingOff:    []string{"set clienv rows 0"},
			CommandError: re(`^\s*CLINFR\d{4}\s+(Invalid|Incomplete|Ambiguous) command`),
		},
		Noise:   []string{`^# Exported by \S+ on \S+ \S+ +\d+ \d{2}:\d{2}:\d{2} \d{4}$`},
		Secrets: gaiaSecrets,
		Notes: "Collects \"show configuration\" in clish: the account's shell must be clish (/etc/cli.sh), not bash. " +
			"It covers Gaia OS settings, not the security policy, which lives on the management server. On VSX, add \"set virtual-system N\" before it in a template per virtual system.",
	})
}
