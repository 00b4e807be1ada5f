package driver

// Building blocks of the secret rules (SecretRule) that many platforms
// share. A rule names the secret with groups named SecretGroup; these
// parts write the common ways a value follows its keyword.

const (
	// secretValue is a value as configurations print it: in double
	// quotes (only the text inside is the secret, so the quotes stay),
	// or a bare word.
	secretValue = `(?:"(?P<secret>[^"]*)"|(?P<secret>[^\s"]\S*))`
	// secretType is the optional word between a keyword and its value
	// that says how the value is written: Cisco's type digits (0, 5, 7,
	// 8, 9), "encrypted", "sha512"…
	secretType = `(?:(?:[0-9]{1,2}|encrypted|hidden|cipher|ciphertext|clear|plain|plaintext|sha512|sha256|md5|hash|ENC) )?`
	// secretTyped is a value after its optional type word.
	secretTyped = secretType + secretValue
)

// ciscoSecrets are the secrets of Cisco IOS and IOS-XE configurations,
// which many platforms write the same way: passwords and their hashes
// (types 0, 5, 7, 8, 9), SNMP communities and SNMPv3 keys, TACACS+ and
// RADIUS keys, routing-protocol authentication, key chains, IPsec
// pre-shared keys and Wi-Fi passphrases.
var ciscoSecrets = []SecretRule{
	{Name: "enable secret", Match: `^enable (?:secret|password)(?: level \d+)? ` + secretTyped},
	{Name: "user password", Match: `^username \S+ (?:\S+ )*?(?:password|secret) ` + secretTyped},
	{Name: "SNMP community", Match: `^snmp-server community ` + secretTyped},
	{Name: "SNMP trap community", Match: `^snmp-server host \S+(?: (?:vrf \S+|informs?|traps|version (?:1|2c|3 (?:auth|noauth|priv))))* ` + secretValue},
	{Name: "SNMPv3 keys", Match: `^snmp-server user .*? auth (?:md5|sha\S*) (?:encrypted )?` + secretValue +
		`(?: priv (?:(?:aes|des|3des)(?:-?\d+)?(?: \d+)? )?(?:encrypted )?` + secretValue + `)?`},
	{Name: "TACACS+/RADIUS key", Match: `^(?:tacacs|radius)-server (?:\S+ )*?key ` + secretTyped},
	{Name: "AAA server key", Match: `^ +(?:server(?:-private)? \S+ (?:\S+ )*?)?key (?:[0-9] ` + secretValue + `|(?P<secret>\S*[^0-9\s]\S*)$)`},
	{Name: "key string", Match: `\bkey-string (?:password )?` + secretTyped},
	{Name: "line or neighbor password", Match: `^ +(?:neighbor \S+ )?(?:password|secret) ` + secretTyped},
	{Name: "OSPF key", Match: `\bospf (?:authentication-key|message-digest-key \d+ md5) ` + secretTyped},
	{Name: "IS-IS password", Match: `^ +(?:isis password|area-password|domain-password) ` + secretTyped},
	{Name: "NTP key", Match: `^ntp authentication-key \d+ (?:md5|sha1|sha256|cmac-aes-128|hmac-sha\S*) ` + secretValue},
	{Name: "VRRP/HSRP authentication", Match: `^ +(?:vrrp \d+ authentication text|standby \d+ authentication(?: text)?) ` + secretValue + `$`},
	{Name: "IKE pre-shared key", Match: `^crypto isakmp key ` + secretTyped},
	{Name: "pre-shared key", Match: `\bpre-shared-key(?: (?:local|remote|key|address \S+(?: [0-9.]+)?|hostname \S+))* ` + secretTyped},
	{Name: "Wi-Fi passphrase", Match: `\b(?:wpa-psk|set-key) (?:ascii|hex) ` + secretTyped},
	{Name: "PPP password", Match: `\bppp (?:chap|pap) (?:\S+ )*?password ` + secretTyped},
	{Name: "client password", Match: `^ip (?:ftp|http client|scp) (?:server )?password ` + secretTyped},
	{Name: "server key", Match: `\bserver-key ` + secretTyped},
	{Name: "VTP password", Match: `^vtp password ` + secretValue},
	{Name: "configuration key", Match: `^key config-key password-encrypt ` + secretValue},
	{Name: "dot1x and AP user password", Match: `^ +(?:dot1x|mgmtuser) username \S+ password ` + secretTyped + `(?: secret ` + secretTyped + `)?`},
	{Name: "type 7 password", Match: `\b(?:password|key) 7 ` + secretValue},
}
