package driver

import "regexp"

// HPE ProCurve / Aruba OS-Switch and Aruba AOS-CX.

// procurvePager is ProCurve's and AOS-CX's "-- MORE --, next page: Space,
// next line: Enter, quit: Control-C".
var procurvePager = re(`(?i)-- ?more ?--,? next page.*$`)

// procurveSecrets are the secrets of ProCurve / Aruba OS-Switch running
// configurations. Passwords and SNMPv3 keys are shown only with
// `include-credentials` (hashed or in clear), keys in clear, or as
// "encrypted-…" values with `encrypt-credentials`.
var procurveSecrets = []SecretRule{
	// "password manager user-name "admin" sha1 "…"", or with
	// encrypt-credentials "encrypted-password manager user-name "admin"
	// U2Fsd…"; a bare "password manager" stays.
	{Name: "manager/operator password", Match: `^password (?:manager|operator|port-access) (?:user-name \S+ )?(?:sha1|sha256|plaintext) ` + secretValue +
		`|^encrypted-password (?:manager|operator|port-access) (?:user-name \S+ )?(?P<secret>[^\s"]\S*)$`},
	{Name: "local user password", Match: `^aaa authentication local-user \S+ (?:group \S+ )?password (?:sha1|sha256|plaintext) ` + secretValue},
	{Name: "credentials encryption key", Match: `^encrypt-credentials pre-shared-key (?:plaintext |hex )?` + secretValue},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	// "snmp-server host 10.0.0.5 "public" Not-INFO", or "… community
	// "public" trap-level critical" on newer releases.
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ (?:(?:\S+ )*?community ` + secretValue + `|"(?P<secret>[^"]*)")`},
	{Name: "SNMPv3 keys", Match: `^snmpv3 user \S+ auth (?:md5|sha\S*) ` + secretValue + `(?: priv (?:des|aes\S*) ` + secretValue + `)?`},
	{Name: "RADIUS/TACACS+ key", Match: `^(?:radius|tacacs)-server (?:\S+ )*?(?:encrypted-)?key ` + secretValue},
	{Name: "SNTP key", Match: `^sntp authentication key-id \d+ .*?\b(?:key-value|encrypted-key) ` + secretValue},
	{Name: "802.1X supplicant secret", Match: `^aaa port-access supplicant .*?\b(?:encrypted-)?secret ` + secretValue},
	// "key-string" or "encrypted-key" of a key-chain's key.
	{Name: "key chain key", Match: `^\s+(?:key-string|encrypted-key) ` + secretValue},
	{Name: "MACsec CAK", Match: `\b(?:encrypted-)?cak ` + secretValue},
	{Name: "OSPF key", Match: `^\s*ip ospf (?:\S+ )?authentication-key ` + secretValue},
}

// aoscxSecrets are the secrets of AOS-CX running configurations: every
// password and key is shown as "ciphertext <base64>", which the default
// export password ("!export-password: default") makes reversible, and
// SNMP communities in clear.
var aoscxSecrets = []SecretRule{
	{Name: "user password", Match: `^user \S+ group \S+ password (?:ciphertext|plaintext) ` + secretValue},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ .*?\bcommunity ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmpv3 user .*?\bauth-pass (?:ciphertext|plaintext) ` + secretValue +
		`(?: .*?\bpriv-pass (?:ciphertext|plaintext) ` + secretValue + `)?`},
	{Name: "RADIUS/TACACS+ key", Match: `^(?:radius|tacacs)-server (?:\S+ )*?key (?:ciphertext|plaintext) ` + secretValue},
	{Name: "NTP key", Match: `^ntp authentication-key \d+ \S+ (?:ciphertext|plaintext) ` + secretValue},
	{Name: "BGP neighbor password", Match: `^\s+neighbor \S+ password (?:ciphertext|plaintext) ` + secretValue},
	{Name: "OSPF key", Match: `^\s+(?:ip ospf (?:authentication-key|message-digest-key \d+ md5)|` +
		`ipv6 ospfv3 authentication ipsec spi \d+ \S+) (?:ciphertext|plaintext) ` + secretValue},
	// Any other key: "radius dyn-authorization client … secret-key
	// ciphertext …", tracking passwords…
	{Name: "ciphertext", Match: `(?:^|\s)(?:ciphertext|plaintext) ` + secretValue},
}

func init() {
	// ProCurve / Aruba OS-Switch: "Press any key to continue" after the
	// banner; the enable dialogue asks for a username as well; "no page"
	// lasts for the session. Hostnames may contain spaces. The header
	// names the release and hardware.
	procurve := cisco()
	procurve.Prompt = re(`^[\w.\-@/:][\w.\-@/: ]{0,63}(\([\w.\-/: ]{1,40}\))?[>#]$`)
	procurve.PagingOff = []string{"no page"}
	procurve.Pager = procurvePager
	procurve.EnableUserPrompt = re(`(?i)user ?name ?:$`)
	procurve.CommandError = re(`^\s*(Invalid input:|Ambiguous input:|Incomplete input:)`)
	procurve.PreLogin = []Answer{{Match: re(`(?i)press any key to continue$`), Send: " "}}
	Register(Platform{
		ID: "hp_procurve", Name: "HPE ProCurve / Aruba OS-Switch", Vendor: "HPE Aruba",
		Aliases:         []string{"procurve", "hp"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        procurve,
		Noise: []string{
			`^; \S+ Configuration Editor; Created on release #\S+$`,
			`^; Ver #\S+$`,
		},
		Secrets: procurveSecrets,
		Syslog: []SyslogPattern{{
			// "Startup configuration changed by CLI..." and "Running config
			// change ..." event log lines.
			Name:    "procurve-config-change",
			Needles: []string{"onfig"},
			Match:   regexp.MustCompile(`(?i)\b(?:startup|running) config(?:uration)? change`),
		}},
	})

	// AOS-CX: administrators land in "#"; "enable" covers operator logins.
	cx := cisco()
	cx.PagingOff = []string{"no page"}
	cx.Pager = procurvePager
	cx.CommandError = re(`^\s*(Invalid input:|Incomplete command|Ambiguous command|% ?(Invalid|Incomplete|Command))`)
	Register(Platform{
		ID: "aruba_aoscx", Name: "Aruba AOS-CX", Vendor: "HPE Aruba",
		Aliases:         []string{"aoscx", "arubaoscx"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        cx,
		Noise:           []string{`^!Version ArubaOS-CX \S+$`},
		Secrets:         aoscxSecrets,
		Syslog: []SyslogPattern{{
			// The accounting record of a configuration command
			// ("type=USYS_CONFIG ... rec=ACCT_CMD"), when accounting goes
			// to syslog.
			Name:    "aoscx-config-command",
			Needles: []string{"USYS_CONFIG"},
			Match:   regexp.MustCompile(`\btype=USYS_CONFIG\b`),
			Exclude: regexp.MustCompile(`\bdata=(?:'|")?(?:show|ping|traceroute)\b`),
		}},
	})
}

// ArubaOS controllers (AOS 6/8 Mobility Controllers and Conductors) and
// Aruba Instant access points.

// arubaMore is the ArubaOS pager: "--More-- (q) quit (u) pageup (/)
// search (n) repeat".
var arubaMore = re(`--More-- \(q\) quit.{0,60}$|(?i)^--\s?more\s?--$`)

// aosSecrets are the secrets of ArubaOS controllers, collected after
// `encrypt disable`: keys, passphrases and communities in clear, and
// management users' password hashes (hex, or stars). Statements inside
// profiles may or may not be indented.
var aosSecrets = []SecretRule{
	{Name: "enable secret", Match: `^enable secret ` + secretValue},
	{Name: "management user password", Match: `^mgmt-user \S+ \S+ (?P<secret>[0-9a-fA-F]{16,}|\*{4,})(?: |$)`},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ version (?:1|2c) ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ .*?\bauth-prot (?i:md5|sha\S*) ` + secretValue +
		`(?: priv-prot \S+ ` + secretValue + `)?`},
	// "key" of an aaa authentication-server radius or tacacs, or of an
	// aaa rfc-3576-server.
	{Name: "RADIUS/TACACS+ key", Match: `^\s*key ` + secretValue},
	{Name: "LDAP bind password", Match: `^\s*admin-passwd ` + secretValue},
	{Name: "IKE pre-shared key", Match: `^\s*(?:crypto-local isakmp key|ike authentication pre-share|pre-shared-key) ` + secretValue},
	{Name: "controller IPsec key", Match: `^\s*(?:masterip|localip|peer-ip-address) \S+ (?:\S+ )*?ipsec ` + secretValue},
	// "authentication <password>" of a VRRP instance; an IKE policy's
	// "authentication pre-share" (a method, no secret) matches the first
	// branch, which masks nothing.
	{Name: "VRRP authentication", Match: `^\s*authentication (?:(?:pre-share|rsa-sig|ecdsa-256|ecdsa-384)\s*$|` + secretValue + `)|` +
		`^\s*vrrp-passphrase ` + secretValue},
	{Name: "AP password", Match: `^\s*(?:ap-console-password|bkup-passwords|usb-passwd|pppoe-passwd) ` + secretValue},
	{Name: "Wi-Fi passphrase", Match: `^\s*(?:wpa-passphrase|wepkey[1-4]) ` + secretValue},
	{Name: "AirWave user password", Match: `^\s*mobility-manager \S+ user \S+ ` + secretValue},
	{Name: "OSPF key", Match: `^\s*ip ospf (?:authentication-key|message-digest-key \d+ md5) ` + secretValue},
	{Name: "NTP key", Match: `^ntp authentication-key \d+ md5 ` + secretValue},
}

// instantSecrets are the secrets of Aruba Instant, collected with
// `show running-config no-encrypt`: keys, passphrases and communities in
// clear, management users' password hashes.
var instantSecrets = []SecretRule{
	{Name: "virtual controller key", Match: `^virtual-controller-key ` + secretValue},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	{Name: "SNMP trap community", Match: `^snmp-server host \S+ version (?:1|2c) ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+ (?i:md5|sha) ` + secretValue + ` (?i:aes|des) ` + secretValue},
	{Name: "management user password", Match: `^hash-mgmt-user \S+ password \S+ ` + secretValue + `|` +
		`^mgmt-user \S+ ` + secretValue + `(?: read-only| guest-mgmt)?$`},
	// "key" of a wlan auth-server or wlan tacacs-server.
	{Name: "RADIUS/TACACS+ key", Match: `^\s+key ` + secretValue},
	{Name: "LDAP bind password", Match: `^\s+admin-password ` + secretValue},
	{Name: "Wi-Fi passphrase", Match: `^\s+(?:wpa-passphrase|wepkey[1-4]) ` + secretValue},
	{Name: "AirWave key", Match: `^ams-key ` + secretValue},
	{Name: "internal user password", Match: `^user (?:"[^"]*"|\S+) ` + secretValue + ` (?:portal|radius)\b`},
	{Name: "PPPoE uplink password", Match: `^\s*pppoe-(?:passwd|chapsecret) ` + secretValue},
}

func init() {
	// AOS 8 prompts carry the configuration node ("(host) [mynode] #",
	// "(host) [md] (config) #") and, in front of it, "*" or "^" while
	// changes are unsaved or pending: those marks are volatile. Telnet
	// asks "User:". "encrypt disable" (sent after login with the paging
	// command; it lasts for the session, and a refusal is tolerated)
	// makes show running-config print keys and passphrases in clear.
	aos := cisco()
	aos.Prompt = re(`^\([^()]{1,64}\) ?([*^]?\[[^\]]{1,64}\] ?)?(\([\w\- ]{1,40}\) ?)?[>#]$`)
	aos.PromptVolatile = re(`[*^]?\[`)
	aos.PagingOff = []string{"no paging", "encrypt disable"}
	aos.Pager = arubaMore
	Register(Platform{
		ID: "aruba_os", Name: "ArubaOS (Mobility Controller)", Vendor: "HPE Aruba",
		Aliases:         []string{"aosw", "aruba"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        aos,
		Secrets:         aosSecrets,
		Notes: "ArubaOS 6 and 8 controllers and conductors. Collected with `encrypt disable`, so keys are " +
			"stored in clear; the account needs enable (root) rights for it.",
	})

	// Instant: "name# " prompts (a space before it after a core dump);
	// "show running-config no-encrypt" prints the keys in clear.
	iap := cisco()
	iap.Prompt = re(`^[\w.\-@:]{1,64}( ?\([\w.\- ]{1,40}\) ?)?[>#]$`)
	iap.PagingOff = []string{"no paging"}
	iap.Pager = arubaMore
	Register(Platform{
		ID: "aruba_instant", Name: "Aruba Instant (IAP)", Vendor: "HPE Aruba",
		Aliases:         []string{"arubainstant"},
		DefaultCommands: lines("show running-config no-encrypt"),
		Dialogue:        iap,
		Secrets:         instantSecrets,
		Notes:           "Collect from the virtual controller: it holds the configuration of the whole Instant cluster.",
	})
}
