package driver

// opengearSecrets: "config -g config" writes the whole tree as
// "config.<path> <value>": users' and the system's password hashes,
// SNMP communities and SNMPv3 passphrases, RADIUS, TACACS+ and LDAP
// passwords, SMTP, modem and PPP passwords, IPsec secrets, Wi-Fi keys.
// "config export" and "ogcli export" (Operations Manager) write
// key=value lines instead ("hashed_password=...", "community=...",
// "private_key=...", quoted in ogcli).
var opengearSecrets = []SecretRule{
	{Name: "password or secret", Match: `^config\.\S*\.(?:[a-z]*password[0-9]?|passwd|secret|psk|passphrase|authkey|privkey|private_key|key) ` + secretValue},
	{Name: "SNMP community", Match: `^config\.\S*\.community[0-9]? ` + secretValue},
	{Name: "password or secret (export)", Match: `(?:^|[\s.])` + unixWords(`hashed_password`, `password`, `private_key`, `secret`, `psk`, `passphrase`, `key`) + `=` + secretValue},
	{Name: "SNMP community (export)", Match: `(?:^|[\s.])community=` + secretValue},
}

func init() {
	// Opengear console servers (ACM, CM, IM; not the Lighthouse / OM
	// "ogcli" generation) run embedded Linux with a BusyBox shell; "config
	// -g config" prints the whole configuration tree as "config.<path>
	// <value>" lines, password hashes included, which "config -s" sets
	// back. Collected with SSH exec requests, as Opengear documents for
	// scripts. Written from the Opengear User Manual ("config" command);
	// no public capture.
	Register(Platform{
		ID: "opengear", Name: "Opengear console server", Vendor: "Opengear",
		Aliases:         []string{"opengear"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("config -g config"),
		Secrets:         opengearSecrets,
		Dialogue: Dialogue{
			Exec:         true,
			Prompt:       re(`^[\w.\-]+@[\w.\-]+:[^\s]{0,128} ?[$#]$`),
			CommandError: re(`^(-?sh: )?\S+: (command )?not found$`),
		},
		Notes: "Collects \"config -g config\" over SSH exec. Operations Manager and Lighthouse units use \"ogcli export\" instead: give them a template with it.",
	})
}
