package driver

func init() {
	// OS10 logs administrators in privileged; the header names the release
	// and stamps the last change. RANCID 3 calls it dnos10.
	os10 := cisco()
	os10.PagingOff = []string{"terminal length 0"}
	Register(Platform{
		ID: "dell_os10", Name: "Dell OS10", Vendor: "Dell",
		Aliases:         []string{"os10", "dellos10", "dnos10"},
		DefaultCommands: lines("show running-configuration"),
		Dialogue:        os10,
		Secrets:         dellOS10Secrets,
		Noise: []string{
			`^! Version \S+$`,
			`^! Last configuration change at `,
		},
	})
}

// Dell N-series (OS6), PowerConnect and Force10 (OS9).
func init() {
	// OS6 (N1100–N3200, DNOS 6) is FASTPATH underneath: "--More-- or
	// (q)uit" pages, telnet asks "User:". The configuration header names
	// the release; nothing in it moves between two shows.
	os6 := cisco()
	os6.PagingOff = []string{"terminal length 0"}
	os6.Pager = re(`--More-- or \(q\)uit.{0,60}$|(?i)--\s?more\s?--$`)
	Register(Platform{
		ID: "dell_os6", Name: "Dell Networking OS6 (N-series)", Vendor: "Dell",
		Aliases:         []string{"os6", "dnos6"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        os6,
		Secrets:         dellOS6Secrets,
	})

	// PowerConnect 28xx/35xx/55xx (Marvell, like Cisco's small-business
	// switches: "User Name:", "terminal datadump") and 62xx/M-series
	// (FASTPATH: "terminal length 0", "--More-- or (q)uit"); both paging
	// commands are sent, the one a model lacks is refused harmlessly. An
	// sFlow receiver owned by a management station counts its timeout down
	// in the configuration.
	pc := cisco()
	pc.Prompt = re(`^[\w.\-@/: ]{1,64}(\([\w.\-/: ]{1,40}\))?[>#]$`)
	pc.PagingOff = []string{"terminal datadump", "terminal length 0"}
	pc.Pager = re(`More: <space>, +Quit: q.{0,40}One line: <return>$|--More-- or \(q\)uit.{0,60}$|(?i)^--\s?more\s?--$`)
	pc.PreLogin = credentialAnswers(re(`^User( Name)?:$`), re(`^Password:$`))
	Register(Platform{
		ID: "dell_powerconnect", Name: "Dell PowerConnect", Vendor: "Dell",
		Aliases:         []string{"powerconnect", "dell", "dellx"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        pc,
		Secrets:         dellPowerConnectSecrets,
		Noise: []string{
			`^sflow \S+ destination owner \S+ timeout (?P<mask>\d+)$`,
		},
		Notes: "PowerConnect 2800/3500/5500 and 6200/7000/8000/M-series switches, and their X-series successors " +
			"(X1000/X4000, Oxidized's dellx); " +
			"hostnames with spaces are accepted.",
	})

	// OS9 (FTOS, Force10): the header stamps the last change (which moves
	// when anyone leaves configuration mode) and the last save. Leaving
	// configuration mode logs IOS's message behind the unit
	// ("%STKUNIT0-M:CP %SYS-5-CONFIG_I: Configured from console").
	// RANCID 3 calls it dnos9, Oxidized's Force10 model dnos.
	os9 := cisco()
	os9.PagingOff = []string{"terminal length 0"}
	Register(Platform{
		ID: "dell_os9", Name: "Dell Networking OS9 (FTOS)", Vendor: "Dell",
		Aliases:         []string{"ftos", "force10", "dell_force10", "dnos9", "dnos"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        os9,
		Secrets:         dellOS9Secrets,
		Noise: []string{
			`^! Last configuration change at `,
			`^! Startup-config last updated at `,
		},
		Syslog: []SyslogPattern{ciscoConfigI},
	})
}

// dellRadiusTacacs is a RADIUS or TACACS+ shared key on a server line of
// OS10 and OS9, global ("tacacs-server key 7 …") or per host
// ("radius-server host 10.0.0.9 auth-port 1812 key 9 …"), its type digit
// optional (0 clear, 7 and 9 encrypted).
const dellRadiusTacacs = `^(?:radius|tacacs)-server (?:\S+ )*?key (?:[079] )?` + secretValue

// dellOS10Secrets are the secrets of OS10 configurations: user and
// Linux user password hashes ($6$), enable passwords per level, SNMP
// communities (also in trap hosts) and SNMPv3 keys (plain, encrypted or
// localized), RADIUS and TACACS+ keys (type 9), NTP keys, and BGP and
// OSPF authentication. "service obscure-password" prints "****" in
// their place, which the rules mask as well.
var dellOS10Secrets = []SecretRule{
	{Name: "local user password", Match: `^(?:username|system-user) \S+ password ` + secretValue},
	// "enable password sha-512 $6$… priv-lvl 15", "enable password 0 … priv-lvl 3".
	{Name: "enable password", Match: `^enable password (?:(?:0|sha-256|sha-512) )?` + secretValue},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	// v1 and v2c hosts only: a v3 host names a user there.
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ (?:\S+ )*?version (?:1|2c) ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ (?:\S+ )*?auth (?:md5|sha) ` + secretTyped +
		`(?: priv (?:des|aes) ` + secretTyped + `)?`},
	{Name: "RADIUS/TACACS+ key", Match: dellRadiusTacacs},
	// "ntp authentication-key 345 md5 0 5A60…", "… sha2-256 9 …".
	{Name: "NTP key", Match: `^ntp authentication-key \d+ \S+ (?:[079] )?` + secretValue},
	// A BGP neighbor's or template's password, in its own mode.
	{Name: "BGP password", Match: `^ +password (?:[079] )?` + secretValue},
	{Name: "OSPF key", Match: `^ +ip ospf (?:authentication-key|message-digest-key \d+ md5) (?:[079] )?` + secretValue},
}

// dellOS6Secrets are the secrets of OS6 (N-series) configurations, whose
// modes are not indented: user and enable password hashes ("…
// encrypted"), line passwords, SNMP communities (also in trap hosts) and
// SNMPv3 keys, RADIUS and TACACS+ keys, global and in a server's mode
// (key 7 "…"), BGP neighbor passwords and OSPF keys.
var dellOS6Secrets = []SecretRule{
	{Name: "local user password", Match: `^username \S+ password ` + secretTyped},
	{Name: "enable password", Match: `^enable password(?: level \d+)? ` + secretTyped},
	// In "line telnet" and the others: "password … encrypted".
	{Name: "line password", Match: `^ *password ` + secretTyped},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	{Name: "SNMP trap community", Match: `^snmp-server host \S+(?: (?:informs|traps|version \S+|timeout \d+|retries \d+))* ` + secretValue},
	// auth-md5, auth-sha (a password) or auth-md5-key, auth-sha-key (a
	// localized key), then priv-des, priv-3des, priv-aes128 likewise.
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ (?:remote \S+ )?auth-(?:md5|sha)(?:-key)? ` + secretValue +
		`(?: priv-(?:des|3des|aes128)(?:-key)? ` + secretValue + `)?`},
	{Name: "RADIUS/TACACS+ key", Match: `^(?:tacacs-server|radius[- ]server) (?:\S+ )*?key (?:[07] )?` + secretValue},
	// The key line of a "tacacs-server host" or "radius server" mode: the
	// type digit is required, so that "key chain …" is left alone.
	{Name: "server key", Match: `^ *key [07] ` + secretValue},
	{Name: "BGP neighbor password", Match: `^ *neighbor \S+ password ` + secretTyped},
	{Name: "OSPF key", Match: `^ *ip ospf authentication (?:simple|encrypt) ` + secretValue},
}

// dellPowerConnectSecrets are the secrets of PowerConnect
// configurations, FASTPATH (62xx) and Marvell (55xx, X-series) alike:
// user, enable and line passwords (hashes, "encrypted"), SNMP
// communities, and RADIUS and TACACS+ keys, which the 55xx writes
// "encrypted radius-server key …".
var dellPowerConnectSecrets = []SecretRule{
	// "username admin password 5f4d… level 15 encrypted",
	// "username admin password encrypted 5f4d… privilege 15".
	{Name: "local user password", Match: `^username \S+ password ` + secretTyped},
	{Name: "enable password", Match: `^enable password(?: level \d+)? ` + secretTyped},
	{Name: "line password", Match: `^ *password ` + secretTyped},
	{Name: "SNMP community", Match: `^(?:encrypted )?snmp-server community ` + secretValue},
	{Name: "RADIUS/TACACS+ key", Match: `^(?:encrypted )?(?:radius|tacacs)-server (?:\S+ )*?key ` + secretTyped},
}

// dellOS9Secrets are the secrets of OS9 (FTOS) configurations, IOS-like:
// enable and user passwords (type 7, secret 5, sha256-password 8), BSD
// shell users, SNMP communities (also in trap hosts) and SNMPv3 keys,
// RADIUS and TACACS+ keys, NTP keys, line passwords, BGP neighbor
// passwords, OSPF and IS-IS keys and VRRP authentication.
var dellOS9Secrets = []SecretRule{
	{Name: "enable password", Match: `^enable (?:password|secret|sha256-password|restricted)(?: level \d+)? ` + secretTyped},
	{Name: "user password", Match: `^(?:bsd-)?username \S+ (?:\S+ )*?(?:password|secret|sha256-password) ` + secretTyped},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ (?:\S+ )*?version (?:1|2c) ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ (?:\S+ )*?auth (?:md5|sha) ` + secretValue +
		`(?: priv (?:des56|aes128) ` + secretValue + `)?`},
	{Name: "RADIUS/TACACS+ key", Match: dellRadiusTacacs},
	{Name: "NTP key", Match: `^ntp authentication-key \d+ md5 ` + secretTyped},
	{Name: "line password", Match: `^ +password ` + secretTyped},
	{Name: "BGP neighbor password", Match: `^ +neighbor \S+ password ` + secretTyped},
	{Name: "OSPF key", Match: `^ +ip ospf (?:authentication-key|message-digest-key \d+ md5) ` + secretTyped},
	{Name: "IS-IS password", Match: `^ +(?:isis password|area-password|domain-password) (?:hmac-md5 )?` + secretTyped},
	// In a vrrp-group: "authentication-type simple 7 387a…".
	{Name: "VRRP authentication", Match: `^ +authentication-type simple ` + secretTyped},
}
