package driver

import "time"

func init() {
	// EOS names its image in the header ("! device: leaf1 (DCS-7050SX-64,
	// EOS-4.28.3M)"), which an upgrade alone changes, and stamps the last
	// save of the startup configuration.
	eos := cisco()
	eos.PagingOff = []string{"terminal length 0", "terminal width 32767"}
	Register(Platform{
		ID: "arista_eos", Name: "Arista EOS", Vendor: "Arista",
		Aliases:         []string{"eos", "arista"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        eos,
		Noise: []string{
			`^! device: \S+ \(.*\)$`,
			`^! Startup-config last modified at `,
		},
		Secrets: eosSecrets,
		Syslog:  []SyslogPattern{ciscoConfigI},
		// Restores in a configuration session (EOS 4.15 and later) with
		// a commit timer; the account needs privilege 15 (a
		// network-admin role). Lines a session refuses are answered with
		// "% Invalid input", "% Incomplete command" and the like. The
		// header comments about the command and the device, and the final
		// "end" (which would leave the session), are not typed.
		Restore: Restore{
			Method:     "eos_session",
			Save:       []string{"write memory"},
			ApplyError: re(`^\s*% `),
			// hh:mm:ss; backupd keeps the window under an hour.
			Timer: ConfirmTimer{Default: 5 * time.Minute, Min: time.Minute, Max: 60 * time.Minute},
			Drop:  []string{`^! Command: `, `^! device: `, `^! boot system `, `^end$`},
			Notes: "Needs configuration sessions (EOS 4.15 or later) and privilege 15. A version with a banner or comment " +
				"block (text up to EOF) is refused before a session is opened.",
		},
	})
}

// eosSecrets: EOS writes user, enable and root secrets (sha512 crypt,
// older type 5), SNMP communities (also per trap host) and SNMPv3 keys,
// TACACS+/RADIUS keys (global and per host), BGP neighbor, OSPF, IS-IS,
// VRRP and NTP keys (type 7), shared-secret profile keys, MACsec CAKs,
// the unsupported-transceiver licence key and the CloudVision shared key
// in the TerminAttr command.
var eosSecrets = []SecretRule{
	{Name: "user secret", Match: `^username \S+ (?:\S+ )*?secret ` + secretTyped},
	{Name: "enable password", Match: `^enable (?:password|secret) ` + secretTyped},
	{Name: "root password", Match: `^aaa root secret ` + secretTyped},
	// A key of a "management security / session shared-secret profile".
	{Name: "shared secret", Match: `^ +secret \d+ ` + secretTyped},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	{Name: "SNMP trap community", Match: `^snmp-server host \S+(?: vrf \S+)?(?: (?:informs|traps))?(?: version (?:1|2c|3 (?:auth|noauth|priv)))? ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ \S+ v3 (?:\S+ )*?auth (?:md5|sha\d*) ` + secretValue +
		`(?: priv (?:des|3des|aes\d*) ` + secretValue + `)?`},
	ciscoAAAKeyRule,
	{Name: "BGP neighbor password", Match: `^ +neighbor \S+ password ` + secretTyped},
	{Name: "OSPF key", Match: `^ +ip ospf (?:authentication-key|message-digest-key \d+ md5) ` + secretTyped},
	{Name: "IS-IS key", Match: `^ +(?:isis )?authentication key ` + secretTyped},
	{Name: "VRRP key", Match: `^ +vrrp \d+ (?:peer )?authentication (?:text|ietf-md5 key-string) ` + secretTyped},
	ciscoNTPRule,
	// A MACsec profile's "key <CKN> 7 <CAK>": the CAK is the secret.
	{Name: "MACsec key", Match: `^ +key [0-9A-Fa-f]+ (?:[0-9] )?` + secretValue},
	{Name: "transceiver licence key", Match: `^service unsupported-transceiver \S+ ` + secretValue},
	{Name: "CloudVision key", Match: `-cvauth=key,(?P<secret>[^\s,]+)`},
}
