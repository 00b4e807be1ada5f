package driver

func init() {
	ruijie := cisco()
	ruijie.PagingOff = []string{"terminal length 0"}
	Register(Platform{
		ID: "ruijie_os", Name: "Ruijie RGOS", Vendor: "Ruijie",
		Aliases:         []string{"ruijie", "rgos"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        ruijie,
		Noise:           ciscoHeader,
		Secrets:         ruijieSecrets,
		Syslog:          []SyslogPattern{ciscoConfigI},
	})
}

// ruijieSecrets: RGOS writes like IOS: enable and user secrets and
// passwords (types 0, 5, 7, 9), SNMP communities (with a type) and
// SNMPv3 keys, TACACS+/RADIUS keys, line and BGP neighbor passwords, OSPF,
// key chain, NTP and IKE keys, and on wireless controllers the WLAN
// security PSK.
var ruijieSecrets = []SecretRule{
	ciscoEnableRule,
	ciscoUserRule,
	ciscoCommunity,
	{Name: "SNMP trap community", Match: `^snmp-server host (?:oob )?\S+(?: (?:vrf \S+|informs|traps|version (?:1|2c|3 (?:auth|noauth|priv))))* ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ v3 (?:\S+ )*?auth (?:md5|sha\S*) ` + secretValue + `(?: priv \S+ ` + secretValue + `)?`},
	ciscoAAAKeyRule,
	ciscoLinePassword,
	ciscoOSPFRule,
	ciscoKeyString,
	ciscoNTPRule,
	{Name: "IKE pre-shared key", Match: `^crypto isakmp key (?:[0-9] )?` + secretValue},
	{Name: "Wi-Fi passphrase", Match: `\bakm psk set-key (?:ascii|hex) ` + secretTyped},
}
