package driver

import "regexp"

// tmosSecrets are the secrets of "tmsh list" (and of the ZebOS routing
// configuration a template may add): local users' password hashes
// (encrypted-password), RADIUS and TACACS+ secrets, the LDAP bind
// password (bind-pw), SNMP communities (community-name in communities,
// community in traps) and SNMPv3 users' keys, SSL key and profile
// passphrases, IKE peers' pre-shared keys, monitors' and SMTP servers'
// passwords, ZebOS BGP neighbours' passwords. TMOS writes them encrypted
// ("$M$..."), hashes as "$6$...". Key files are not in the listing ("sys
// file ssl-key" and "sys crypto key" hold only their metadata and
// passphrase).
var tmosSecrets = []SecretRule{
	{Name: "password or its hash", Match: `^\s+(?:encrypted-|challenge-|admin-encrypted-)?password(?:-encrypted)? ` + secretValue},
	{Name: "SNMPv3 key", Match: `^\s+(?:auth|privacy)-password(?:-encrypted)? ` + secretValue},
	{Name: "RADIUS/TACACS+ secret", Match: `^\s+secret ` + secretValue},
	{Name: "LDAP bind password", Match: `^\s+bind-pw ` + secretValue},
	{Name: "SNMP community", Match: `^\s+community(?:-name)? ` + secretValue},
	{Name: "key passphrase", Match: `^\s+passphrase ` + secretValue},
	{Name: "IKE pre-shared key", Match: `^\s+preshared-key(?:-encrypted)? ` + secretValue},
	{Name: "BGP neighbour password (ZebOS)", Match: `^\s*neighbor \S+ password (?:[0-9] )?` + secretValue},
}

func init() {
	// F5 BIG-IP (TMOS): collected with SSH exec requests into the
	// account's bash shell, which runs tmsh for the configuration (and
	// needs no "modify cli preference pager disabled": an exec request
	// has no terminal, so tmsh does not page). "tmsh -q list" prints the
	// running configuration of /Common, password hashes included; routes
	// are listed separately ("list net route all"). Recorded on a real
	// BIG-IP tenant (rSeries) over exec.
	//
	// Noise: the monitor state tmsh writes into pool members ("state
	// up"/"state down"; "user-down" is configuration and stays), and the
	// bookkeeping of certificate and file objects that an HA
	// config-sync rewrites without changing them ("create-time",
	// "last-update-time", "revision"); their checksum and size still
	// change when the file does.
	Register(Platform{
		ID: "f5_tmos", Name: "F5 BIG-IP TMOS", Vendor: "F5",
		Aliases:         []string{"tmos", "f5", "bigip", "bigip13", "f5_ltm"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("tmsh -q list", "tmsh -q list net route all"),
		Secrets:         tmosSecrets,
		Dialogue: Dialogue{
			Exec:         true,
			Prompt:       re(`^(\[[\w.\-]+@[\w.\-]+:[^\]]{1,64}\] [^\s]{1,128} # |[\w.\-]+@\([\w.\-]+\)\([^)]*\)\([^)]*\)\([^)]*\)#)$`),
			CommandError: re(`^((-?bash: )?(line \d+: )?\S+: command not found|Syntax Error: .*)$`),
		},
		Noise: []string{
			`^\s+state (up|down|checking|irule-down)$`,
			`^\s+(create-time|last-update-time) \d{4}-\d{2}-\d{2}:\d{2}:\d{2}:\d{2}$`,
			`^\s+revision \d+$`,
		},
		Syslog: []SyslogPattern{{
			// mcpd's audit message 01070417 for a configuration
			// transaction: "AUDIT - client tmsh, user admin - transaction
			// #123-4 - object 0 - modify { ltm pool p1 { ... } }
			// [Status=Command OK]" (create, modify, delete).
			Name:    "f5-mcpd-audit",
			Needles: []string{"01070417:"},
			Match:   regexp.MustCompile(`\b01070417:\d: AUDIT - .{0,256}? - object \d+ - (?:create|modify|delete) \{`),
			Exclude: regexp.MustCompile(`\[Status=(?:[^C\]]|C[^o])`),
		}},
		Notes: "The account needs bash as its shell (Advanced shell role) so that exec requests run tmsh; with tmsh as its shell use a template with \"list\" and \"list net route all\". " +
			"Other partitions than /Common: add \"cat /config/partitions/*/bigip*.conf\" in a template.",
	})
}
