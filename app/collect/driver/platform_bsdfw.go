package driver

// pfSense and OPNsense (FreeBSD firewalls) and Netgate TNSR.

// bsdShellPrompt matches the shells of the FreeBSD firewalls:
// pfSense's "[2.7.2-RELEASE][admin@pfSense.home.arpa]/root: " and
// OPNsense's csh "root@OPNsense:~ # " or sh "$ ". It is only needed where
// no exec request is possible; both platforms are collected over exec.
var bsdShellPrompt = re(`^((\[[^\[\]]{1,64}\]){1,2}[^\s]{0,128}:|[\w.\-]+@[\w.\-]+:\S{0,128} ?[#%$>]|[#%$])$`)

// bsdShellError is what the shells print for a command that does not
// exist (csh "show: Command not found.", sh "sh: show: not found") and
// what cat prints when the configuration file is missing or unreadable:
// a backup of that text would look like a configuration.
var bsdShellError = re(`^(\S+: Command not found\.|(-?sh: )?\S+: not found|cat: \S+: (No such file or directory|Permission denied))$`)

// configXMLNoise are the lines of config.xml that a save rewrites even
// when nothing else changed: the <revision> stamp (the epoch time and the
// user@address who saved) and the filter reload time.
var configXMLNoise = []string{
	`^\s*<time>\d{9,10}(\.\d{1,6})?</time>$`,
	`^\s*<username>[^<>@\s]{1,64}@[0-9A-Fa-f.:]{2,45}( \([^()<>]{1,64}\))?</username>$`,
	`^\s*<last_rule_upd_time>\d{9,10}</last_rule_upd_time>$`,
}

// configXMLSecret is a config.xml element among tags whose text is a
// secret: the text between the start tag (attributes allowed) and the
// next "<", or the inside of a CDATA section. Empty elements
// ("<password/>", "<password></password>") hold nothing.
func configXMLSecret(tags ...string) string {
	return `<` + unixWords(tags...) + `(?:\s[^>]*)?>(?:<!\[CDATA\[(?P<secret>.*?)\]\]>|(?P<secret>[^<]+))`
}

// configXMLSecrets are the secrets of pfSense's and OPNsense's
// config.xml: the users' password hashes (bcrypt, SHA-512, older MD5 and
// NT hashes) and the <password> of every service (dynamic DNS, PPP,
// CARP, HA sync, monit, LDAP and RADIUS servers, OpenVPN clients), SNMP
// communities, certificates' and CAs' private keys (<prv>, base64 of a
// PEM key), OpenVPN shared and TLS keys, WireGuard keys, IPsec pre-shared
// keys (phase 1, users', mobile clients', OPNsense's <Key> of
// <preSharedKey>), RADIUS and LDAP secrets, API secrets, TOTP seeds.
var configXMLSecrets = []SecretRule{
	{Name: "password or password hash", Match: configXMLSecret(`bcrypt-hash`, `sha512-hash`, `md5-hash`, `nt-hash`, `password`, `passwd`, `pass`, `auth_pass`, `httpdPassword`, `smtppassword`, `md5password`)},
	{Name: "SNMP community", Match: configXMLSecret(`rocommunity`, `rwcommunity`, `trapstring`)},
	{Name: "private key", Match: configXMLSecret(`prv`, `privatekey`, `privkey`, `private-key`, `shared_key`, `tls`, `key`)},
	{Name: "pre-shared key", Match: configXMLSecret(`pre-shared-key`, `ipsecpsk`, `psk`, `presharedkey`, `Key`)},
	{Name: "RADIUS, LDAP or API secret", Match: configXMLSecret(`radius_secret`, `radius_secret2`, `radiuskey`, `radiuskey2`, `ldap_bindpw`, `secret`, `authkey`, `apikey`, `api_key`, `otp_seed`)},
}

// tnsrSecrets are the secrets of TNSR's "show configuration running cli":
// local users' password hashes and BGP neighbours' passwords (both a
// "password" line inside their block), SNMP communities, IPsec IKE
// pre-shared keys ("psk" inside "authentication local|remote" rounds)
// and WireGuard private keys.
var tnsrSecrets = []SecretRule{
	{Name: "password", Match: `^\s+password ` + secretValue},
	{Name: "SNMP community", Match: `^snmp community community-name ` + secretValue},
	{Name: "IPsec pre-shared key", Match: `^\s+psk ` + secretValue},
	{Name: "WireGuard private key", Match: `^\s+private-key (?:base64 )?` + secretValue},
}

func init() {
	// pfSense keeps its whole configuration, password hashes and keys
	// included, in /cf/conf/config.xml: that file is what a restore
	// takes. An interactive SSH login starts the console menu, so the
	// file is read with an exec request. pfSense has no telnet server.
	Register(Platform{
		ID: "pfsense", Name: "pfSense", Vendor: "Netgate",
		Aliases:         []string{"pfsense"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("cat /cf/conf/config.xml"),
		Secrets:         configXMLSecrets,
		Dialogue: Dialogue{
			Exec:         true,
			Prompt:       bsdShellPrompt,
			CommandError: bsdShellError,
		},
		Noise: configXMLNoise,
		Notes: "Reads /cf/conf/config.xml over an SSH exec request (the console menu is never started). " +
			"The account needs the \"User - System: Shell account access\" privilege; the built-in admin account cannot run exec requests on older releases.",
	})

	// OPNsense: the same design, /conf/config.xml. Recorded on a real
	// OPNsense 24.7 (nano) over exec.
	Register(Platform{
		ID: "opnsense", Name: "OPNsense", Vendor: "Deciso",
		Aliases:         []string{"opnsense"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("cat /conf/config.xml"),
		Secrets:         configXMLSecrets,
		Dialogue: Dialogue{
			Exec:         true,
			Prompt:       bsdShellPrompt,
			CommandError: bsdShellError,
		},
		Noise: configXMLNoise,
		Notes: "Reads /conf/config.xml over an SSH exec request (the console menu is never started). " +
			"SSH and password login must be enabled and the account needs the \"System: Shell account access\" privilege.",
	})

	// Netgate TNSR: the TNSR CLI (clixon) is the login shell; its prompt
	// is "<host> tnsr# " ("<host> tnsr(config)# " in configuration mode).
	// It offers no paging-off command: "--More--" is answered, and the
	// page is wiped with eight backspaces, spaces and backspaces, which
	// the output cleanup resolves. 23.06 sometimes prints "--More--" at
	// the end of a line of output instead of on a line of its own, so the
	// pager is not anchored to the start of the line. SSH only.
	Register(Platform{
		ID: "netgate_tnsr", Name: "Netgate TNSR", Vendor: "Netgate",
		Aliases:         []string{"tnsr"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("show configuration running cli"),
		Secrets:         tnsrSecrets,
		Dialogue: Dialogue{
			Prompt:       re(`^[\w.\-]+ tnsr(\([\w\-]+\))?#$`),
			Pager:        re(`--More--$`),
			CommandError: re(`^\s*(CLI syntax error|Unknown command|% ?Invalid)`),
		},
		Notes: "Collects \"show configuration running cli\", the running configuration as CLI commands, in the TNSR CLI over SSH.",
	})
}
