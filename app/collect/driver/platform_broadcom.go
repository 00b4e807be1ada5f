package driver

// Broadcom FASTPATH / EFOS and the switches built on it (Netgear ProSAFE
// managed switches, Ubiquiti EdgeSwitch, Broadcom's own EFOS on NetApp
// cluster switches).

// fastpathPrompt: "(Metro_Switch_A_1)>", "(Metro_Switch_A_1) #",
// "(UBNT EdgeSwitch) >", "(M4300-52G) (Config)#" — the system name in
// parentheses (it may hold spaces), then the mode in parentheses when
// configuring.
var fastpathPrompt = re(`^\([\w.\-/ ]{1,64}\) ?(\([\w.\-/ ]{1,40}\) ?)?[>#]$`)

// fastpathError: "% Invalid input detected at '^' marker.", "Command not
// found / Incomplete command. Use ? to list commands.", "An invalid
// interface has been used for this function."
var fastpathError = re(`^\s*(% ?(Invalid input|Incomplete command|Ambiguous command|Unrecognized command)|` +
	`Command not found|Incomplete command\. Use \?|An invalid interface has been used)`)

// fastpath is the FASTPATH dialogue (pager: fastpathPager, "--More-- or
// (q)uit", shared with AireOS): the login lands in ">" and "enable"
// asks for a password (which may be empty on these switches, but backupd
// can only answer one that is set), "terminal length 0" lasts for the
// session.
func fastpath() Dialogue {
	return Dialogue{
		Prompt:         fastpathPrompt,
		Pager:          fastpathPager,
		PagingOff:      []string{"terminal length 0"},
		Enable:         "enable",
		Privileged:     privileged,
		PasswordPrompt: passwordQ,
		EnableFailed:   enableFailed,
		CommandError:   fastpathError,
	}
}

// fastpathNoise: the header of "show running-config" carries the uptime
// and the clock ("!System Up Time          "146 days 23 hrs 39 mins 1
// secs"", "!Current System Time: Apr  8 13:30:29 2025", "!Current SNTP
// Synchronized Time: …"), which move at every show; Netgear's smart
// switches write "! System Up Time: 123 days, …" with a blank.
var fastpathNoise = []string{
	`^! ?System Up Time\b`,
	`^! ?Current System Time:`,
	`^! ?Current SNTP Synchronized Time:`,
}

// Secrets of FASTPATH configurations (EFOS, EdgeSwitch, Netgear's
// managed switches): user passwords as hashes (username "admin"
// password … level 15 encryption-type sha256 encrypted), the enable
// password, SNMP communities (also in trap receivers) and SNMPv3 keys,
// and RADIUS and TACACS+ keys ("encrypted …"). Netgear's Smart Managed
// Pro switches write "snmp" for "snmp-server" and "secret" for
// "password".
var (
	fastpathUser = SecretRule{Name: "local user password",
		Match: `^username \S+ (?:password|secret) (?:encrypted )?` + secretValue}
	fastpathEnable = SecretRule{Name: "enable password", Match: `^enable pass(?:wor)?d ` + secretTyped}
	// snmp-server community "public" ro; older FASTPATH's snmp-server
	// community ipaddr 10.0.0.5 public, snmp-server community rw
	// private; Netgear's snmp community "public" enable 0.0.0.0 mask
	// 0.0.0.0 ro.
	fastpathCommunity = SecretRule{Name: "SNMP community",
		Match: `^snmp(?:-server)? community (?:(?:ipaddr|ipmask) \S+ |(?:mode|ro|rw) )?` + secretValue}
	// A v1 or v2c trap receiver: snmptrap "public" 10.0.0.5 snmpversion
	// snmpv2 (an address follows the community, so that snmptrap
	// source-interface 0/1 stays); snmp host 10.0.0.5 enable version 2c
	// "public".
	fastpathTrap = SecretRule{Name: "SNMP trap community",
		Match: `^(?:snmptrap ` + secretValue + ` (?:ipaddr )?[0-9A-Fa-f.:]+(?: |$)|` +
			`snmp(?:-server)? host \S+ (?:\S+ )*?version (?:1|2c?|snmpv1|snmpv2c?) ` + secretValue + `)`}
	// snmp-server user NAME GROUP auth-sha-key KEY priv-des-key KEY;
	// Netgear's snmp user "NAME" "GROUP" auth md5 encrypted KEY.
	fastpathSNMPv3 = SecretRule{Name: "SNMPv3 keys",
		Match: `^snmp(?:-server)? user \S+ \S+ (?:\S+ )*?auth[- ](?:md5|sha\d*)(?:-key)? (?:encrypted )?` + secretValue +
			`(?: priv[- ](?:des|3des|aes\d*)(?:-key)? (?:encrypted )?` + secretValue + `)?`}
	// Global, on one line, or the key line of a "tacacs-server host"
	// mode ("key encrypted …", not indented).
	fastpathTacacs = SecretRule{Name: "TACACS+ key",
		Match: `^(?:tacacs-server (?:\S+ )*?key (?:encrypted )?|key encrypted )` + secretValue}
	// "radius server key auth 10.0.0.9 encrypted …".
	fastpathRadius = SecretRule{Name: "RADIUS key",
		Match: `^radius[- ]server (?:\S+ )*?key (?:(?:auth|acct) \S+ )?(?:encrypted )?` + secretValue}
)

// fastpathSecrets are those of EFOS and EdgeSwitch.
var fastpathSecrets = []SecretRule{fastpathUser, fastpathEnable, fastpathCommunity, fastpathTrap, fastpathSNMPv3, fastpathTacacs, fastpathRadius}

func init() {
	// EFOS is FASTPATH as Broadcom ships it (NetApp BES-53248 cluster
	// switches): same prompt, enable and paging. The recording shows the
	// login at ">" and an enable without a password question. Quanta's
	// LB-series switches run FASTPATH too (Oxidized's quantaos: the same
	// "(name) >" prompt, enable and "terminal length 0").
	Register(Platform{
		ID: "broadcom_efos", Name: "Broadcom EFOS (FASTPATH)", Vendor: "Broadcom",
		Aliases:         []string{"efos", "fastpath", "quantaos"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        fastpath(),
		Noise:           fastpathNoise,
		Secrets:         fastpathSecrets,
		Notes: "Also Quanta LB-series switches (FASTPATH). Logs in at \">\" and runs \"enable\"; set the enable password on the device " +
			"credential when the switch asks for one. The configuration shows passwords encrypted, as the switch stores them.",
	})
}
