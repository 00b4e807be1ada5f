package driver

import "regexp"

func init() {
	// Ruckus (formerly Brocade/Foundry) FastIron on ICX switches, and
	// the IronWare it grew from: "SSH@ICX7150-48P#", "telnet@ICX7150>",
	// "ICX7450-48P Router#", "SSH@ICX7150-48P(config-if-e1000-1/1/1)#".
	// "enable" may ask for a user name as well when enable authentication
	// is local. "skip-page-display" lasts for the session, but some
	// releases refuse it ("Invalid input -> skip-page-display", issue
	// 3819 of Oxidized): the pager is then answered; it is "--More--,
	// next page: Space, next line: Return key, quit: Control-c" and is
	// wiped with "\e[2K\e[1G". Errors: "Invalid input -> word" with "Type
	// ? for a list", "Incomplete command.", "Error - …".
	Register(Platform{
		ID: "ruckus_fastiron", Name: "Ruckus FastIron (ICX)", Vendor: "Ruckus (CommScope)",
		Aliases:         []string{"fastiron", "ironware", "brocade_fastiron", "ruckus_icx", "foundry"},
		DefaultCommands: lines("show running-config"),
		Dialogue: Dialogue{
			Prompt:           re(`^((SSH|telnet|console)@)?[\w.\-#][\w.\-# ]{0,62}(\([\w.\-/: ]{1,40}\))?[>#]$`),
			Pager:            re(`(?i)^--More--(, next page: Space, next line: Return key, quit: Control-c)?$`),
			PagingOff:        []string{"skip-page-display"},
			Enable:           "enable",
			Privileged:       privileged,
			PasswordPrompt:   passwordQ,
			EnableUserPrompt: re(`(?i)user ?name ?:$`),
			EnableFailed:     enableFailed,
			CommandError:     re(`^\s*(Invalid input ->|Incomplete command\.|Ambiguous input ->|Error - |% ?Invalid input)`),
		},
		Secrets: fastironSecrets,
		Notes: "Logs in at \">\" and runs \"enable\" (with the login user name when enable authentication asks for one). " +
			"Passwords appear encrypted, as the switch stores them.",
		Syslog: []SyslogPattern{{
			// "running-config was changed by admin from ssh client
			// 192.0.2.7" (also "from telnet client", "from console"), as
			// the log buffer of an ICX shows it.
			Name:    "fastiron-running-config-changed",
			Needles: []string{"running-config was changed"},
			Match:   regexp.MustCompile(`\brunning-config was changed (?:by|from)\b`),
		}},
	})
}

// fastironSecrets are the secrets of FastIron and IronWare
// configurations. The switch prints most of them as "....." unless
// "enable password-display" is set, and then encrypted ("8 $1$…" for
// passwords, "2 $…" for keys and communities): user and enable
// passwords, SNMP communities (also in trap hosts) and SNMPv3 keys,
// RADIUS and TACACS+ keys, BGP neighbor passwords, OSPF and NTP keys and
// VRRP authentication. The rules mask the dots too.
var fastironSecrets = []SecretRule{
	{Name: "user password", Match: `^username \S+ (?:\S+ )*?password ` + secretTyped},
	{Name: "enable password", Match: `^enable (?:super-user-password|port-config-password|read-only-password|telnet password) ` + secretTyped},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretTyped},
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ version v(?:1|2c) ` + secretTyped},
	// "snmp-server user NAME GROUP v3 encrypted auth md5 KEY priv
	// encrypted des KEY".
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ v3 (?:\S+ )*?auth (?:md5|sha) ` + secretValue +
		`(?: priv (?:encrypted )?(?:des|aes) ` + secretValue + `)?`},
	{Name: "RADIUS/TACACS+ key", Match: `^(?:radius|tacacs)-server (?:\S+ )*?key ` + secretTyped},
	{Name: "BGP neighbor password", Match: `^ +neighbor \S+ password ` + secretTyped},
	{Name: "OSPF key", Match: `^ +ip ospf (?:authentication-key|md5-authentication key-id \d+ key) ` + secretTyped},
	// In the "ntp" mode: "authentication-key key-id 1 md5 …".
	{Name: "NTP key", Match: `^ +authentication-key key-id \d+ (?:md5|sha1) ` + secretTyped},
	{Name: "VRRP authentication", Match: `^ +ip vrrp(?:-extended)? auth-type (?:simple-text-auth|md5-auth) ` + secretTyped},
}
