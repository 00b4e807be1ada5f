package driver

// WatchGuard Fireware (Firebox): SSH only, on port 4118. Prompts are
// "WG>" for the status account and "WG#" for admin, with the cluster and
// management marks in front of the mark: "[FAULT]WG<managed-by-wsm><master>>"
// (Oxidized's prompt examples). Since XTM 11.9.3 a Logon Disclaimer may
// ask "I have read and accept the Logon Disclaimer message. (yes or no)? "
// before the first prompt; it is accepted. `export config to console`
// prints the whole XML configuration, which needs the admin account.
// firewareValue is an XML element's text, on the element's line.
const firewareValue = `>(?P<secret>[^<]+)</`

// firewareSecrets are the secrets of the Fireware XML profile: elements
// holding passwords (hashed or encrypted), pre-shared keys, RADIUS and
// LDAP secrets and SNMP communities.
var firewareSecrets = []SecretRule{
	{Name: "password or passphrase", Match: `<(?:[\w-]*-)?(?:password|passphrase|passwd)` + firewareValue},
	{Name: "pre-shared key", Match: `<(?:pre-shared-key|shared-key|psk)` + firewareValue},
	{Name: "RADIUS/LDAP secret", Match: `<(?:[\w-]*-)?secret` + firewareValue},
	{Name: "SNMP community", Match: `<(?:[\w-]*-)?community` + firewareValue},
}

func init() {
	Register(Platform{
		ID: "watchguard_fireware", Name: "WatchGuard Fireware", Vendor: "WatchGuard",
		Aliases:         []string{"firewareos", "fireware", "watchguard"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("export config to console"),
		Dialogue: Dialogue{
			Prompt:       re(`^(\[\w{1,20}\])?[\w.\-]{1,64}(<[\w.\-]{1,40}>){0,4}(\([\w.\-/]{1,40}\))?[>#]$`),
			Pager:        re(`(?i)--\s?more\s?--$`),
			CommandError: re(`^\s*(% ?(Invalid|Incomplete|Ambiguous|Unknown|Unrecognized)|Error: |Unknown command)`),
			PreLogin: []Answer{{
				Match: re(`(?i)accept the logon disclaimer message\. \(yes or no\)\?$`),
				Send:  "yes\n",
			}},
		},
		Secrets: firewareSecrets,
		Notes:   "SSH on port 4118 with the admin account (the status account cannot export the configuration).",
	})
}
