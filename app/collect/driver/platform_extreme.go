package driver

func init() {
	// EXOS: "X440G2.5 # ", "* X440G2.6 # " once the configuration is
	// unsaved, "Slot-1 Stack.3 # " on stacks; the counter changes with
	// every command. "disable clipaging" lasts for the session. Noise: when
	// the file was generated and by which release; the "# Module …
	// configuration." section headers never change and stay.
	Register(Platform{
		ID: "extreme_exos", Name: "Extreme EXOS", Vendor: "Extreme Networks",
		Aliases:         []string{"exos", "xos", "extreme"},
		DefaultCommands: lines("show configuration"),
		Dialogue: Dialogue{
			Prompt:         re(`^(\* )?(\([^)]*\) )?([\w\-]+ )?[\w.\-]+\.\d+ ?[#>]$`),
			PromptVolatile: re(`^\* |\.\d+ ?`),
			Pager:          re(`Press <SPACE> to continue or <Q> to quit:$`),
			PagingOff:      []string{"disable clipaging"},
			CommandError:   re(`^\s*(%% ?(Invalid|Incomplete|Ambiguous|Unrecognized)|Error:)`),
		},
		Noise: []string{
			`^#\s.*[Cc]onfiguration generated `,
			`^# Software Version \S+`,
		},
		Secrets: exosSecrets,
	})
}

func init() {
	// Extreme VOSS (VSP 4000/7200/7400/8000, formerly Avaya): "VSP-8284:1>"
	// (the number is the CPU slot), `enable` to "VSP-8284:1#" (no
	// password: the login's access level decides), `terminal more disable`
	// for the session, `show running-config`. The listing opens with
	// "Preparing to Display Configuration..." (kept: it never changes) and
	// a header whose date changes at every show and whose software version
	// changes with upgrades.
	voss := cisco()
	voss.Prompt = re(`^[\w.\-]{1,64}:\d{1,2}(\([\w.\-/]{1,40}\))?[>#]$`)
	voss.PagingOff = []string{"terminal more disable"}
	voss.Pager = re(`(?i)-{2,}more \(q=quit, space/return=continue.*\)-{2,}$`)
	Register(Platform{
		ID: "extreme_voss", Name: "Extreme VOSS (VSP)", Vendor: "Extreme Networks",
		Aliases:         []string{"voss", "extreme_vsp", "vsp"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        voss,
		Noise: []string{
			`^# [A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}( \S+)?$`,
			`^# software version\s+: `,
		},
		Secrets: vossSecrets,
	})
}

// exosSecrets are the secrets of EXOS configurations (and of
// ExtremeWare's, which abbreviate "configure" to "config"): account
// password hashes, RADIUS and TACACS+ shared secrets, SNMP communities
// (both forms) and SNMPv3 keys (localized, encrypted or hex), BGP
// neighbor passwords, OSPF and VRRP authentication, and the passwords of
// network login's local users. All are written "encrypted", most in
// quotes.
var exosSecrets = []SecretRule{
	// create account admin ops encrypted "$5$…"; configure account admin
	// encrypted "…"; configure account ops password encrypted ….
	{Name: "account password", Match: `^(?:create|config(?:ure)?) account (?:(?:admin|user) )?\S+ (?:password )?encrypted ` + secretValue},
	{Name: "RADIUS/TACACS+ shared secret", Match: `^config(?:ure)? (?:radius|radius-accounting|tacacs|tacacs-accounting) (?:\S+ )*?shared-secret +(?:encrypted +)?` + secretValue},
	{Name: "SNMP community", Match: `^config(?:ure)? snmp add community (?:readonly|readwrite) (?:encrypted )?` + secretValue},
	// The community's index and its name: configure snmpv3 add community
	// encrypted "…" name encrypted "…" user "v1v2c_ro".
	{Name: "SNMP community (v3 table)", Match: `^config(?:ure)? snmpv3 add community (?:encrypted )?` + secretValue + ` name (?:encrypted )?` + secretValue},
	// "authentication sha auth-encrypted localized-key 23:24:… privacy aes
	// 128 privacy-encrypted localized-key 23:24:…", and the forms typed in:
	// "authentication md5 PASSWORD privacy des PASSWORD", "… hex …",
	// authentication encrypted sha "…".
	{Name: "SNMPv3 keys", Match: `^config(?:ure)? snmpv3 add user .*?\bauthentication (?:encrypted )?(?:md5|sha\S*) (?:(?:auth-encrypted localized-key|encrypted|hex) )?` + secretValue +
		`(?: privacy (?:encrypted )?(?:(?:des|3des|aes)(?: (?:128|192|256))? )?(?:(?:privacy-encrypted localized-key|encrypted|hex) )?` + secretValue + `)?`},
	{Name: "BGP neighbor password", Match: `^config(?:ure)? bgp neighbor \S+ password (?:encrypted )?` + secretValue},
	{Name: "OSPF authentication", Match: `^config(?:ure)? ospf(?:v3)? (?:vlan|virtual-link|area) .*?\bauthentication (?:encrypted )?(?:simple-password|md5 \d+) ` + secretValue},
	{Name: "VRRP authentication", Match: `^config(?:ure)? vrrp vlan \S+ vrid \d+ authentication (?:encrypted )?simple-password ` + secretValue},
	{Name: "network login user password", Match: `^create netlogin local-user \S+ encrypted ` + secretValue},
}

// vossSecrets are the secrets of VOSS configurations. Local users'
// passwords live outside the configuration; what it holds: SNMP
// communities and SNMPv3 keys, RADIUS and TACACS+ keys, IS-IS hello
// authentication keys (per port and for Auto-sense ports) and OSPF keys.
var vossSecrets = []SecretRule{
	{Name: "SNMP community", Match: `^snmp-server community ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user \S+(?: group \S+)? (?:md5|sha\S*) ` + secretValue +
		`(?: (?:aes\d*|des|3des) ` + secretValue + `)?`},
	{Name: "RADIUS/TACACS+ key", Match: `^(?:radius|tacacs) server host \S+ (?:\S+ )*?key ` + secretValue},
	{Name: "IS-IS hello key", Match: `\bisis hello-auth type (?:simple|hmac-md5|hmac-sha-256) key ` + secretValue},
	{Name: "OSPF key", Match: `^ *ip ospf (?:authentication-key|message-digest-key \d+ md5) ` + secretValue},
}
