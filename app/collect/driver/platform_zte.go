package driver

// ZTE ZXR10 switches and routers (ZXROS): an IOS-like command line,
// "ZXR10>" raised with `enable` (and its password) to "ZXR10#",
// `terminal length 0`, `show running-config`. No public capture of a real
// session exists; the dialogue follows ZTE's ZXR10 command references.
func init() {
	zx := cisco()
	zx.PagingOff = []string{"terminal length 0"}
	// "%Error 20203: Invalid input detected at '^' marker.", "%Error 20200:
	// Incomplete command." as well as the IOS forms.
	zx.CommandError = re(`^\s*(%\s?Error \d+:|%\s?(Invalid|Incomplete|Ambiguous|Unknown|Unrecognized))`)
	Register(Platform{
		ID: "zte_zxros", Name: "ZTE ZXROS (ZXR10)", Vendor: "ZTE",
		Aliases:         []string{"zxros", "zxr10", "zte"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        zx,
		Secrets:         zxrosSecrets,
		Notes:           "Needs the enable password where the login lands in user mode (\"ZXR10>\").",
	})
}

// zxrosSecrets are the secrets of ZXROS configurations, which write
// "encrypted" before a value the device encrypted: user and enable
// passwords, SNMP communities (also in trap hosts) and SNMPv3 keys,
// TACACS+ and RADIUS keys (also of a RADIUS group's servers), BGP
// neighbor passwords and OSPF keys.
var zxrosSecrets = []SecretRule{
	{Name: "user password", Match: `^username \S+ (?:\S+ )*?password ` + secretTyped},
	{Name: "enable password", Match: `^enable (?:secret|password)(?: level \d+)? ` + secretTyped},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretTyped},
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ (?:\S+ )*?version (?:1|2c) ` + secretTyped},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ (?:\S+ )*?auth (?:md5|sha) ` + secretValue +
		`(?: priv (?:des56|aes\d*) ` + secretValue + `)?`},
	// "tacacs-server host 10.0.0.10 key encrypted …", and a server of
	// a "radius authentication-group": " server 1 10.0.0.9 master key …".
	{Name: "TACACS+/RADIUS key", Match: `^(?:(?:tacacs|radius)-server (?:\S+ )*?| +server \d+ \S+ (?:\S+ )*?)key ` + secretTyped},
	{Name: "BGP neighbor password", Match: `^ +neighbor \S+ password ` + secretTyped},
	{Name: "OSPF key", Match: `^ +(?:ip ospf )?(?:authentication-key|message-digest-key \d+ md5) ` + secretTyped},
}
