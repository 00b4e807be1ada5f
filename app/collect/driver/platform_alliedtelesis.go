package driver

// Allied Telesis AlliedWare Plus.
//
// AlliedWare Plus is Cisco-like: "awplus>" and "awplus#", enable (a
// privilege-15 user gets "#" without a password), "terminal length 0"
// for the session, " --More-- " and "% Invalid input detected at '^'
// marker.". Its running configuration has no time stamps or counters, so
// there are no noise rules.
//
// Written from the AlliedWare Plus command reference; there is no public
// capture of an AlliedWare Plus session.
func init() {
	awp := cisco()
	awp.PagingOff = []string{"terminal length 0"}
	Register(Platform{
		ID: "alliedtelesis_awplus", Name: "Allied Telesis AlliedWare Plus", Vendor: "Allied Telesis",
		Aliases:         []string{"awplus", "alliedware"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        awp,
		Secrets:         awplusSecrets,
		Notes:           "Passwords are shown hashed (service password-encryption), as the device stores them.",
	})
}

// awplusSecrets are the secrets of AlliedWare Plus configurations, which
// write like IOS with type 8 for what service password-encryption hides:
// enable and user passwords (MD5 hashes), SNMP communities (also in trap
// hosts) and SNMPv3 keys, RADIUS and TACACS+ keys, global and per host,
// BGP neighbor passwords, OSPF and NTP keys, key chains (RIP) and the
// IKE pre-shared keys of AR-series routers.
var awplusSecrets = []SecretRule{
	{Name: "enable password", Match: `^enable (?:password|secret)(?: level \d+)? ` + secretTyped},
	{Name: "user password", Match: `^username \S+ (?:privilege \d+ )?(?:password|secret) ` + secretTyped},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	// v1 and v2c hosts only: a v3 host names a user there.
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ (?:(?:traps|informs) )?version (?:1|2c) ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ (?:encrypted )?auth (?:md5|sha) ` + secretValue +
		`(?: priv (?:des|aes) ` + secretValue + `)?`},
	{Name: "RADIUS/TACACS+ key", Match: `^(?:radius|tacacs)-server (?:\S+ )*?key ` + secretTyped},
	// A BGP neighbor's password, and any other indented password.
	{Name: "neighbor or line password", Match: `^ +(?:neighbor \S+ )?(?:password|secret) ` + secretTyped},
	// "ip ospf message-digest-key 1 md5 …", also with the interface
	// address before the keyword.
	{Name: "OSPF key", Match: `^ +ip ospf (?:\S+ )?(?:authentication-key|message-digest-key \d+ md5) ` + secretTyped},
	{Name: "NTP key", Match: `^ntp authentication-key \d+ (?:md5|sha1) ` + secretTyped},
	{Name: "key string", Match: `^ +key-string ` + secretTyped},
	{Name: "IKE pre-shared key", Match: `^crypto isakmp key ` + secretTyped},
}
