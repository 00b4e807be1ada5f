package driver

import "regexp"

// fortiosSecrets are the secrets of FortiOS `show`: every password and
// key is shown as "ENC <base64>", reversible with the device's key (and
// re-encrypted with a fresh salt at every show) or, for administrators,
// a hash ("ENC SH2…"). A private key sits in a quoted PEM block, which
// the private key rule of every platform masks.
//
// Left out: the name of an SNMP community ("set name" under "config
// system snmp community") reads as every other "set name" line, and a
// rule sees one line at a time.
var fortiosSecrets = []SecretRule{
	// The backup header when private data encryption is on.
	{Name: "private data encryption key", Match: `^#private-encryption-key=(?P<secret>.+)$`},
	{Name: "administrator or user password", Match: `^\s*set (?:password|passwd) ENC (?P<secret>\S+)`},
	{Name: "IPsec pre-shared key", Match: `^\s*set (?:psksecret|psksecret-remote|ppk-secret) ENC (?P<secret>\S+)`},
	{Name: "RADIUS/TACACS+/NTP key", Match: `^\s*set (?:(?:secondary-|tertiary-)?(?:secret|key)) ENC (?P<secret>\S+)`},
	{Name: "SNMPv3 keys", Match: `^\s*set (?:auth-pwd|priv-pwd) ENC (?P<secret>\S+)`},
	{Name: "Wi-Fi passphrase", Match: `^\s*set (?:passphrase|sae-password) ENC (?P<secret>\S+)`},
	{Name: "routing authentication key", Match: `^\s*set (?:authentication-key|key-string|md5-key \d+) ENC (?P<secret>\S+)`},
	// Any other encrypted value: proxy passwords, API secrets…
	{Name: "encrypted value", Match: `^\s*set \S+ ENC (?P<secret>\S+)`},
}

func init() {
	// FortiOS: the only way to stop paging is "config system console /
	// set output standard", which changes the configuration, so the pager
	// is answered. A login disclaimer ("Press 'a' to accept") is accepted.
	//
	// The header names the firmware, build and a counter bumped on every
	// save; secrets are shown re-encrypted with a fresh salt on every
	// `show`, so only the ENC value is masked. Admin password hashes ("ENC
	// SH2…", older "ENC AK1…") are shown as stored and stay comparable, so
	// an admin password change still counts.
	Register(Platform{
		ID: "fortinet", Name: "Fortinet FortiOS", Vendor: "Fortinet",
		Aliases:         []string{"fortios", "fortigate", "fortigate-full"},
		DefaultCommands: lines("show"),
		Dialogue: Dialogue{
			Prompt:       re(`^[\w.\-]{1,64}( \([\w.\-]{1,40}\))? [#$]$`),
			Pager:        re(`--More--$`),
			CommandError: re(`^\s*(Command fail\.|Unknown action|command parse error)`),
			PreLogin:     []Answer{{Match: re(`(?i)\(press 'a' to accept\):?$`), Send: "a"}},
		},
		Noise: []string{
			`^#config-version=\S*$`,
			`^#conf_file_ver=\S*$`,
			`^#buildno=\S*$`,
			`^\s*set \S+ ENC (?P<mask>(?:[^SA\s]|S[^H\s]|SH[^2\s]|A[^K\s]|AK[^1\s])\S*)`,
		},
		Syslog: []SyslogPattern{{
			// Event log, subtype system: logdesc="Configuration changed"
			// (logid 0100044546) and logdesc="Object attribute configured"
			// (logid 0100044547).
			Name:    "fortios-config-changed",
			Needles: []string{"logdesc=", "logid="},
			Match:   regexp.MustCompile(`logdesc="(?:Configuration changed|Object attribute configured)"|logid="?01000445(?:46|47)\b`),
		}},
		Secrets: fortiosSecrets,
		Notes: "Collects \"show\" (what differs from the defaults). RANCID's fortigate-full type kept " +
			"\"show full-configuration\" (every default too): use a template with that command for the same text.",
	})
}
