package driver

import "regexp"

// panosValue is a PAN-OS value, in braces ("…;") or a set command.
const panosValue = `(?:"(?P<secret>[^"]*)"|(?P<secret>[^\s";{}]+))`

// panosSecrets are the secrets of PAN-OS `show config running`, in
// braces or set commands: administrators' and local users' password
// hashes ("phash $5$…"), every other password or key encrypted with the
// master key ("-AQ==…", reversible by whoever holds it), SNMP
// communities in clear.
var panosSecrets = []SecretRule{
	{Name: "password hash", Match: `(?:^|\s)phash ` + panosValue},
	// The v2c agent's "snmp-community-string", a v2c trap server's
	// "community".
	{Name: "SNMP community", Match: `(?:^|\s)(?:snmp-community-string|community) ` + panosValue + `(?:;|$)`},
	{Name: "SNMPv3 keys", Match: `(?:^|\s)(?:authpwd|privpwd) ` + panosValue},
	// IKE pre-shared keys, RADIUS/TACACS+ secrets, LDAP bind passwords,
	// routing authentication keys, certificates' private keys.
	{Name: "encrypted value (-AQ==)", Match: `(?:^|\s)"?(?P<secret>-AQ==[^\s";]*)`},
}

func init() {
	// PAN-OS: "admin@PA-VM>", with the HA state in brackets on pairs. Its
	// output changes only when the configuration does.
	Register(Platform{
		ID: "paloalto_panos", Name: "Palo Alto PAN-OS", Vendor: "Palo Alto Networks",
		Aliases:         []string{"panos", "paloalto"},
		DefaultCommands: lines("show config running"),
		Dialogue: Dialogue{
			Prompt:       re(`^[\w.\-]+@[\w.\-]+(\([\w.\-]+\))?[>#]$`),
			PromptLines:  juniperPromptLines,
			Pager:        re(`^lines \d+-\d+`),
			PagingOff:    []string{"set cli pager off"},
			CommandError: re(`^\s*(Unknown command:|Invalid syntax\.|Server error)`),
		},
		Syslog: []SyslogPattern{{
			// CONFIG log (CSV): ...,CONFIG,<subtype>,<future>,<generated>,
			// <host>,<vsys>,<command>,<admin>,<client>,<result>,... A commit
			// is when the running configuration changes; set/edit only touch
			// the candidate.
			Name:    "panos-config-commit",
			Needles: []string{",CONFIG,"},
			Match:   regexp.MustCompile(`,CONFIG,(?:[^,]*,){5}commit,[^,]*,[^,]*,(?:Submitted|Succeeded)\b`),
		}},
		Secrets: panosSecrets,
	})
}
