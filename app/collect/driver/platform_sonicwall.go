package driver

// SonicWall SonicOS 6.5 and 7 (NSa, TZ, NSv): SSH only. The prompt is
// "user@serial> " ("admin@C0EAE4123456> ", "admin@host-with-minus> ",
// Oxidized's prompt examples) and "config(C0EAE4123456)# " in
// configuration mode. `no cli pager session` turns the pager off for the
// session only; `show current-config` prints the configuration as CLI
// commands.
// sonicosValue is how SonicOS writes a secret: "<n>,<value>", the digit
// saying how the value is written.
const sonicosValue = `\d,(?:"(?P<secret>[^"]*)"|(?P<secret>\S+))`

// sonicosSecrets are the secrets of SonicOS `show current-config`:
// passwords, shared secrets and keys in the "<n>,<value>" form, and SNMP
// communities as plain words.
var sonicosSecrets = []SecretRule{
	// Administrator ("password hash 1,…"), users, SSL-VPN, FTP, the
	// default CLI FTP password ("password default 1,…").
	{Name: "password", Match: `(?:^|\s)password (?:hash |default )?` + sonicosValue},
	{Name: "RADIUS/TACACS+/LDAP secret", Match: `(?:^|\s)(?:shared-secret|secret|bind-password) ` + sonicosValue},
	{Name: "IPsec shared key", Match: `(?:^|\s)shared-key ` + sonicosValue},
	{Name: "SNMPv3 keys", Match: `(?:^|\s)(?:authentication (?:md5|sha1?)|encryption (?:aes|des)) ` + sonicosValue},
	{Name: "Wi-Fi passphrase", Match: `(?:^|\s)passphrase ` + sonicosValue},
	{Name: "mail password", Match: `(?:^|\s)(?:smtp|pop)-pass ` + sonicosValue},
	{Name: "SNMP community", Match: `^\s+(?:get-|trap-)?community ` + secretValue},
}

func init() {
	Register(Platform{
		ID: "sonicwall_sonicos", Name: "SonicWall SonicOS", Vendor: "SonicWall",
		Aliases:         []string{"sonicos", "sonicwall"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("show current-config"),
		Dialogue: Dialogue{
			Prompt:       re(`^([\w.\-]{1,64}@[\w.\-]{1,64}|config\([\w.\-]{1,64}\))[>#]$`),
			Pager:        re(`(?i)--\s?more\s?--$`),
			PagingOff:    []string{"no cli pager session"},
			CommandError: re(`^\s*(% ?(Unknown|Invalid|Incomplete|Ambiguous|Command)|Error: )`),
		},
		// Lines Oxidized's sonicos model drops for the same reason: the
		// clock, the uptime and the checksum move while the settings stay.
		Noise: []string{
			`^\s*system-time "\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2}(\.\d+)?"$`,
			`^\s*system-uptime "`,
			`^\s*checksum \d+$`,
		},
		Secrets: sonicosSecrets,
		Notes:   "SSH only. The administrator account is needed for show current-config.",
	})
}
