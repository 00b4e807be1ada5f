package driver

import (
	"slices"
	"strings"
)

// unixWords is an alternation of keywords, each in a group of its own:
// the parser would otherwise factor out a prefix that neighbouring words
// share ("passw" of password and passwd), leaving branches too short for
// the line filter, which needs a literal of 3 bytes in every branch.
func unixWords(words ...string) string { return `(?:(` + strings.Join(words, `)|(`) + `))` }

// unixHash is a crypt(3) hash (MD5 $1$, bcrypt $2?$, SHA-256 $5$,
// SHA-512 $6$, yescrypt $y$ and $gy$, Apache's $apr1$), its scheme
// included. Each prefix is its own group so that the parser keeps it
// whole (it would factor the common "$" out of an alternation of plain
// literals) and the line filter finds a literal of 3 bytes in every
// branch.
const unixHash = `(?:(\$1\$)|(\$2a\$)|(\$2b\$)|(\$2y\$)|(\$5\$)|(\$6\$)|(\$y\$)|(\$gy\$)|(\$apr1\$))[^:\s]+`

// linuxSecrets are the secrets of the files a Linux host's templates
// read (the default /etc/network/interfaces, and /etc/shadow,
// snmpd.conf, FRR, WireGuard, strongSwan, NTP and chrony keys,
// keepalived, wpa_supplicant, hostapd, TACACS+ clients, netplan):
// password hashes, Wi-Fi keys, SNMP communities and SNMPv3 users' keys,
// routing daemons' passwords and keys, WireGuard and IPsec keys, NTP
// keys and "password=" style settings. Cumulus Linux, a Debian, shares
// them.
var linuxSecrets = slices.Concat([]SecretRule{
	// /etc/shadow and gshadow (a locked account's "!" stays),
	// htpasswd.
	{Name: "password hash", Match: `^[^:\s#]+:!*(?P<secret>` + unixHash + `)(?::|$)`},
	// /etc/network/interfaces (wpa-*, wireless-tools).
	{Name: "Wi-Fi key", Match: `^\s*(?:wpa-psk|wpa-passphrase|wpa-password|wireless-key[0-9]?)\s+` + secretValue},
	// wpa_supplicant, hostapd, /etc/tacplus_servers, ddclient, .my.cnf.
	{Name: "password setting", Match: `^\s*` + unixWords(`password`, `passwd`, `psk`, `secret`, `sae_password`, `private_key_passwd`, `wpa_passphrase`, `wpa_psk`, `wep_key[0-3]`) + `\s*=\s*` + secretValue},
	// snmpd.conf.
	{Name: "SNMP community", Match: `^\s*(?:(?:ro|rw)community6?|trapcommunity)\s+(?P<secret>\S+)`},
	{Name: "SNMP community (com2sec)", Match: `^\s*com2sec6?\s+(?:-Cn \S+\s+)?\S+\s+\S+\s+(?P<secret>\S+)`},
	{Name: "SNMP trap community", Match: `^\s*(?:trapsink|trap2sink|informsink)\s+\S+\s+(?P<secret>\S+)`},
	{Name: "SNMPv3 keys", Match: `^\s*(?i:createuser)\s+(?:-e \S+\s+)?\S+\s+(?:MD5|SHA\S*)\s+(?:-[lm]\s+)?` + secretValue +
		`(?:\s+(?:DES|AES\S*)\s+(?:-[lm]\s+)?` + secretValue + `)?`},
}, frrSecrets, []SecretRule{
	// wg-quick and systemd-networkd files.
	{Name: "WireGuard key", Match: `^\s*(?:PrivateKey|PresharedKey)\s*=\s*(?P<secret>\S+)`},
	// strongSwan/Libreswan ipsec.secrets: ": PSK "secret"", "user :
	// EAP "password"".
	{Name: "IPsec secret", Match: `:\s*(?:PSK|EAP|XAUTH|NTLM)\s+` + secretValue},
	// ntp.keys and chrony.keys: "1 SHA1 HEX:...".
	{Name: "NTP key", Match: `^\s*\d+\s+(?:MD5|SHA1|SHA256|SHA384|SHA512|AES128|AES256|RMD160)\s+(?P<secret>\S+)`},
	// keepalived VRRP.
	{Name: "VRRP password", Match: `^\s*auth_pass\s+(?P<secret>\S+)`},
	// netplan Wi-Fi access points and 802.1X.
	{Name: "password (YAML)", Match: `^\s+password:\s+` + secretValue},
})

func init() {
	// Linux over SSH: exec requests, no prompt guessing. Over telnet any
	// shell prompt ending in $ # % or > will do. No CommandError: a
	// missing file is part of what the host looks like.
	Register(Platform{
		ID: "linux", Name: "Linux", Vendor: "Linux",
		Aliases: []string{"linuxgeneric"},
		Secrets: linuxSecrets,
		DefaultCommands: lines(
			"cat /etc/hostname",
			"cat /etc/hosts",
			"cat /etc/resolv.conf",
			"cat /etc/network/interfaces",
		),
		Dialogue: Dialogue{
			Exec:   true,
			Prompt: re(`^(\S.{0,126})?[$#%>]$`),
		},
	})
}
