package driver

func init() {
	// Lenovo CNOS (Cloud Network OS, ThinkSystem NE and RackSwitch G8xxx
	// with CNOS): an IOS-like command line, "NE2572>" then "enable" to
	// "NE2572#", "terminal length 0", "show running-config". Oxidized's
	// "cnos" model is written for Centec CNOS (FS.com S5850, see fs_os),
	// whose dialogue is the same; imports that name "cnos" land here and
	// work for both. Errors, as Ansible's CNOS terminal plugin lists
	// them: "% Error…", "% Bad secret", "Invalid input", "Incomplete
	// command", "Ambiguous command".
	d := cisco()
	d.PagingOff = []string{"terminal length 0"}
	d.CommandError = re(`^\s*% ?(Invalid input|Incomplete command|Ambiguous command|Unrecognized command|Error|Bad secret)`)
	Register(Platform{
		ID: "lenovo_cnos", Name: "Lenovo CNOS", Vendor: "Lenovo",
		Aliases:         []string{"cnos"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        d,
		Secrets:         cnosSecrets,
		Notes: "Logs in at \">\" and runs \"enable\" when the user is not privileged. " +
			"The public recording under Oxidized's \"cnos\" model is an FS.com S5850 (Centec CNOS): it proves fs_os, " +
			"and replays through this platform too, but no Lenovo switch has been recorded.",
	})
}

// cnosSecrets: Lenovo CNOS writes user password hashes ("password
// encrypted $6$..."), SNMP communities (also per trap host) and SNMPv3
// keys, TACACS+/RADIUS keys, BGP neighbor passwords (under the neighbor),
// OSPF and NTP keys. Imports of Oxidized's "cnos" model land here and may
// be Centec-based FS.com switches: their forms (fsCentecSecrets) are
// masked too.
var cnosSecrets = append([]SecretRule{
	ciscoUserRule,
	ciscoEnableRule,
	ciscoCommunity,
	// The community follows the version: "snmp-server host X vrf
	// management" and the like hold none.
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ (?:(?:informs|traps) )?version (?:1|2c) ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ (?:\S+ )*?auth (?:md5|sha\S*) ` + secretValue +
		`(?: priv (?:(?:aes-128|des) )?` + secretValue + `)?`},
	ciscoAAAKeyRule,
	{Name: "BGP neighbor password", Match: `^ +password ` + secretTyped},
	ciscoOSPFRule,
	ciscoNTPRule,
}, fsCentecSecrets...)
