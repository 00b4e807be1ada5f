package driver

import "regexp"

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
		Notes: "Collects \"show\" (what differs from the defaults). RANCID's fortigate-full type kept " +
			"\"show full-configuration\" (every default too): use a template with that command for the same text.",
	})
}
