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
		Noise:   []string{`^Building configuration\.\.\.$`},
		Secrets: fsSecrets,
		Notes: "S3400/S3900 and the Centec-based S5850/S8050 series. Passwords and keys appear as the switch " +
			"stores them (type 7 with service password-encryption).",
	})
}

// fsCentecSecrets are the forms of the Centec-based FSOS (S5850/S8050,
// also Centec CNOS as Oxidized's "cnos" model records it), which writes
// "8 <ciphertext>" with service password-encryption: line passwords,
// SNMP trap and inform target communities, USM (SNMPv3) user keys, NTP
// keys, RMON event communities and the passphrase of an imported RSA key.
var fsCentecSecrets = []SecretRule{
	{Name: "line password", Match: `^ +line-password ` + secretTyped},
	{Name: "SNMP target community", Match: `^snmp-server (?:trap|inform) target-address .*? community ` + secretTyped},
	{Name: "SNMPv3 (USM) keys", Match: `^snmp-server usm-user \S+ (?:remote \S+ )?authentication (?:md5|sha) (?:8 )?` + secretValue +
		`(?: privacy (?:aes|des) (?:8 )?` + secretValue + `)?`},
	{Name: "NTP key (Centec)", Match: `^ntp key \d+ ` + secretTyped},
	ciscoRMONRule,
	{Name: "RSA key password", Match: `^ +key password ` + secretTyped},
}

// fsSecrets: FSOS on the S3400/S3900 writes user and enable passwords
// (type 7), SNMP communities (with a type, also per trap host) and SNMPv3
// keys (auth, then priv, after one type digit), RADIUS/TACACS+ keys,
// global or per server in an AAA group, and OSPF keys; the Centec-based
// models add fsCentecSecrets.
var fsSecrets = append([]SecretRule{
	ciscoUserRule,
	ciscoEnableRule,
	ciscoCommunity,
	{Name: "SNMP trap community", Match: `^snmp-server host \S+(?: (?:udp-port \d+|permit|deny \d+|informs?|traps?|version v?(?:1|2c|3 (?:priv|auth|noauth))))* ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ v3 (?:priv \S+ )?auth \S+ (?:[0-9] )?` + secretValue + `(?: ` + secretValue + `)?`},
	ciscoAAAKeyRule,
	{Name: "AAA server key", Match: `^ +server \S+ (?:\S+ )*?key ` + secretTyped},
	ciscoOSPFRule,
}, fsCentecSecrets...)
