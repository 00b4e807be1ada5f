package driver

// A10 Networks ACOS (AX and Thunder series).
//
// ACOS logs in at "host>" and enable asks "Password:" even when the
// enable password is empty. The prompt carries the VRRP-A / aVCS state
// ("vThunder-Active>", "vMaster[1/1]#") and the partition ("host[p1]#"),
// and the state part changes on a fail-over. Paging and width last for
// the session. The pager is "--MORE--"; errors are Cisco-like
// ("% Unrecognized command.", "% Incomplete command.").
//
// Written from the ACOS CLI reference; there is no public capture of an
// ACOS session.
// acosSecrets: ACOS writes its secrets encrypted ("password encrypted
// <base64>"): administrators' passwords, SNMP communities (read and
// write) and SNMPv3 users' keys, RADIUS and TACACS+ secrets, routing and
// key passphrases alike. A community typed in clear is kept in clear
// until it is saved again, so the word "encrypted" is optional there.
var acosSecrets = []SecretRule{
	{Name: "administrator password", Match: `^admin \S+ password (?:encrypted )?` + secretValue},
	{Name: "SNMP community", Match: `^snmp-server community (?:read|write) (?:encrypted )?` + secretValue},
	{Name: "RADIUS/TACACS+ secret", Match: `^(?:radius|tacacs)-server host \S+ (?:\S+ )*?secret (?:encrypted )?` + secretValue},
	// Any other "password|secret|key|passphrase encrypted <value>".
	{Name: "encrypted secret", Match: `\b(?:password|secret|secret-string|key|passphrase|pass-phrase|authentication-key) encrypted (?P<secret>\S+)`},
}

func init() {
	acos := cisco()
	acos.Prompt = re(`^[\w.\-/:?\[\]()]{1,100}[>#]$`)
	acos.PromptVolatile = re(`-(?:Active|Standby|ForcedStandby|vMaster|vBlade)\b`)
	acos.PagingOff = []string{"terminal length 0", "terminal width 0"}
	Register(Platform{
		ID: "a10_acos", Name: "A10 ACOS", Vendor: "A10 Networks",
		Aliases:         []string{"acos", "a10"},
		DefaultCommands: lines("show running-config all-partitions"),
		Dialogue:        acos,
		Secrets:         acosSecrets,
		// The header: size, change and save times, the release line.
		Noise: []string{
			`^!Current configuration: \d+ bytes$`,
			`^!Configuration last (?:updated|saved|synchronized) at `,
			`^!(?:64-bit )?Advanced Core OS \(ACOS\) version `,
		},
		Notes: "show running-config all-partitions covers the shared partition and every L3V partition. aFleX scripts, " +
			"certificates and keys are files, not configuration lines: back them up separately. ACOS asks for the " +
			"enable password even when it is empty, so give the device an enable password in backupd.",
	})
}
