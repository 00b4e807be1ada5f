package driver

import "regexp"

// routerosValue is a property's value as /export writes it: in double
// quotes, with backslash escapes (only the text inside is the secret), or
// a bare word.
const routerosValue = `(?:"(?P<secret>(?:[^"\\]|\\.)*)"|(?P<secret>[^\s"]\S*))`

// routerosSecrets are the secrets of a RouterOS export made with
// show-sensitive (RouterOS 7; RouterOS 6 shows them in any export): every
// one is a property (name=value) of an add or set command, anywhere on
// the line, since /export wraps long commands onto indented continuation
// lines. PPP, hotspot and client passwords, RADIUS and IPsec secrets,
// Wi-Fi keys, WireGuard keys, routing keys, SNMP communities and SNMPv3
// keys. Local users' passwords are never exported.
var routerosSecrets = []SecretRule{
	// /ppp secret, /ip hotspot user, PPPoE/L2TP/SSTP/OVPN clients,
	// /tool e-mail, VRRP, LTE APNs, 802.1X clients.
	{Name: "password", Match: `(?:^|\s)(?:password|mschapv2-password)=` + routerosValue},
	// /radius, /ip ipsec identity and peer, the IPsec secret of EoIP,
	// GRE, IPIP and L2TP server tunnels, User Manager routers, RoMON.
	{Name: "shared secret", Match: `(?:^|\s)(?:secret|secrets|ipsec-secret|shared-secret)=` + routerosValue},
	// Wireless security profiles and access lists, wifi (wave2)
	// security, CAPsMAN.
	{Name: "Wi-Fi key", Match: `(?:^|\s)(?:wpa-pre-shared-key|wpa2-pre-shared-key|private-pre-shared-key|passphrase|static-key-[0-3]|static-sta-private-key|management-protection-key)=` + routerosValue},
	// /interface wireguard and its peers.
	{Name: "WireGuard key", Match: `(?:^|\s)(?:private-key|preshared-key)=` + routerosValue},
	// BGP TCP MD5 keys, OSPF authentication keys (v7 auth-key, v6
	// authentication-key).
	{Name: "routing protocol key", Match: `(?:^|\s)(?:tcp-md5-key|auth-key|authentication-key)=` + routerosValue},
	// /snmp community: an SNMPv3 user's keys.
	{Name: "SNMPv3 key", Match: `(?:^|\s)(?:authentication-password|encryption-password)=` + routerosValue},
	// /snmp community: the default community renamed ("set [ find
	// default=yes ] name=public"), or one added (its addresses come first:
	// /export writes properties in alphabetical order), and the trap
	// community of /snmp.
	{Name: "SNMP community", Match: `^(?:set \[ find default=yes \] (?:\S+ )*?|add addresses=\S+ (?:\S+ )*?)name=` + routerosValue},
	{Name: "SNMP trap community", Match: `(?:^|\s)trap-community=` + routerosValue},
}

func init() {
	// RouterOS over SSH: exec requests (no colours, no pager, no terminal
	// probing). Over telnet the "+ct" login flags switch colours and
	// terminal detection off; the pager is answered. RouterOS 7 hides
	// secrets in /export unless asked.
	//
	// Noise: the export header with its date ("# 2024-10-25 06:08:35 by
	// RouterOS 7.10.1", v6 "# jan/02/1970 00:00:00 by RouterOS 6.48"), the
	// licence id, and the status remarks `/export` writes between
	// statements while a port is down or a firmware waits for a reboot.
	Register(Platform{
		ID: "mikrotik_routeros", Name: "MikroTik RouterOS", Vendor: "MikroTik",
		Aliases:         []string{"routeros", "mikrotik"},
		DefaultCommands: lines("/export show-sensitive"),
		Secrets:         routerosSecrets,
		Dialogue: Dialogue{
			Exec:             true,
			Prompt:           re(`^\[[^\[\]@\s]+@[^\[\]]+\] [^\[\]]*>$`),
			Pager:            re(`-- \[Q quit\|.*\]$`),
			TelnetUserSuffix: "+ct",
			CommandError:     re(`^\s*(bad command name|syntax error|expected end of command|no such item|input does not match)`),
			PreLogin:         []Answer{{Match: re(`(?i)see the software license\? ?\[y/n\]:?$`), Send: "n\n"}},
		},
		Noise: []string{
			`^# \S+ \d{2}:\d{2}:\d{2} by RouterOS \S+`,
			`^# software id = \S*$`,
			`^# inactive time$`,
			`^# received packet from \S+ bad format$`,
			`^# poe-out status: short_circuit$`,
			`^# Firmware upgraded successfully, please reboot for changes to take effect!$`,
			`^# \S+ not ready$`,
		},
		// RouterOS cannot replace its configuration in place: a restore
		// resets the router and runs the version at boot, which REBOOTS
		// it (twice when the restore goes back). The account needs the
		// full policy (ftp for the SCP copy, reboot, policy, write) and
		// must be a local user: keep-users=yes keeps it across the reset.
		Restore: Restore{
			Method: "routeros_reset_import",
			ApplyError: re(`(?i)^\s*(script error|bad command name|syntax error|expected end of command|expected command name|` +
				`no such item|input does not match|failure:|invalid value)|cannot open import file`),
			File: "backupd-restore.rsc",
			Notes: "Reboots the router: it is reset to an empty configuration that runs the version as its startup script, " +
				"and is out of service for its boot time (twice if the restore has to go back). The version is checked with " +
				"/import dry-run first (RouterOS 7); a router that cannot check it is not reset. Local users are kept; " +
				"certificates, user SSH keys and other things /export leaves out are not restored. Restore from a backup made " +
				"with the same RouterOS version and on the same router.",
		},
		Syslog: []SyslogPattern{{
			// "system,info mangle rule changed by admin", "item added by
			// admin"; with bsd-syslog the topics are left out.
			Name:    "routeros-system-change",
			Needles: []string{" by "},
			Match:   regexp.MustCompile(`^(?:system,info(?:,[a-z]+)*\s+)?[A-Za-z0-9 ./_-]{1,80}? (?:added|changed|removed|moved) by \S`),
		}},
	})
}
