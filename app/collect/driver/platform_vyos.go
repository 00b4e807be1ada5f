package driver

import "time"

// Secrets of the Vyatta family (VyOS, Vyatta, Ubiquiti EdgeOS), as "show
// configuration commands" writes them: set commands whose values are in
// single quotes ('$6$...'; the quotes stay) or bare words. The same
// statements in the brace format of "show configuration" (an indented
// keyword, its value bare or in double quotes) are matched too where the
// keyword alone says it is a secret.
const (
	// vyattaValue is a value: single-quoted, double-quoted or bare.
	vyattaValue = `(?:'(?P<secret>[^']*)'|"(?P<secret>[^"]*)"|(?P<secret>[^\s'"{][^\s{]*))`
	// vyattaAt is where a secret's keyword may start: after any path of a
	// set command, or at the indentation of a brace-format line.
	vyattaAt = `(?:^set (?:\S+ )*?|^\s+)`
)

// vyattaSecrets are the secrets of VyOS (1.2 to 1.5) and Vyatta-derived
// EdgeOS: login password hashes and SNMPv3 keys (encrypted- and
// plaintext-password, encrypted- and plaintext-key before VyOS 1.3), the
// passwords of BGP neighbours, PPPoE, VRRP, dynamic DNS, L2TP/SSTP users,
// OSPF and RIP; RADIUS and TACACS+ keys, IPsec pre-shared secrets,
// WireGuard, PKI and OpenVPN keys, Wi-Fi passphrases, SNMP communities,
// the API and OTP keys, MACsec CAKs and passwords in URLs.
var vyattaSecrets = []SecretRule{
	{Name: "password hash or plain-text password", Match: vyattaAt + `(?:encrypted|plaintext)-(?:password|key) ` + vyattaValue},
	// BGP neighbours, PPPoE, VRRP, dynamic DNS, local users of L2TP,
	// SSTP, OpenConnect and remote-access IPsec, RIP MD5.
	{Name: "password", Match: vyattaAt + `password ` + vyattaValue},
	// VyOS "system login radius server X key"; VyOS 1.2 and EdgeOS
	// "system login radius-server X secret"; TACACS+; the RADIUS servers
	// of PPPoE, IPoE and L2TP servers.
	{Name: "RADIUS/TACACS+ key", Match: `^set (?:\S+ )*?(?:radius|tacacs)(?:-server| server) \S+ (?:\S+ \S+ )*?(?:key|secret) ` + vyattaValue},
	// VyOS 1.4 "vpn ipsec authentication psk X secret"; VyOS 1.3 and
	// EdgeOS "authentication pre-shared-secret"; L2TP IPsec settings.
	{Name: "IPsec pre-shared secret", Match: vyattaAt + `(?:pre-shared-)?secret ` + vyattaValue},
	{Name: "WireGuard key", Match: vyattaAt + `(?:private-key|preshared-key) ` + vyattaValue},
	{Name: "PKI private key", Match: `^set pki (?:ca|certificate|key) \S+ private key ` + vyattaValue},
	{Name: "OpenVPN shared secret", Match: `^set pki openvpn shared-secret \S+ key ` + vyattaValue},
	{Name: "Wi-Fi passphrase", Match: vyattaAt + `passphrase ` + vyattaValue},
	{Name: "OSPF MD5 key", Match: vyattaAt + `md5-key ` + vyattaValue},
	{Name: "SNMP community", Match: `^set service snmp (?:trap-target \S+ )?community ` + vyattaValue},
	// The brace format: "community public {".
	{Name: "SNMP community (brace format)", Match: `^\s+community (?P<secret>\S+) \{$`},
	{Name: "API key", Match: `^set service https api keys id \S+ key ` + vyattaValue},
	{Name: "OTP key", Match: `^set system login user \S+ authentication otp key ` + vyattaValue},
	{Name: "MACsec key", Match: `^set interfaces macsec \S+ security mka cak ` + vyattaValue},
	// A commit archive's location (scp://user:password@host/path).
	{Name: "password in a URL", Match: `\b[a-z][a-z0-9+.-]*://[^/:@\s'"]+:(?P<secret>[^/@\s'"]+)@`},
}

func init() {
	// VyOS operational mode is a shell; op-mode commands do not work over
	// a plain exec request, so the interactive shell is used. Releases up
	// to 1.4 know "set terminal length 0", later ones "terminal length 0";
	// the one a release does not know is rejected and ignored.
	Register(Platform{
		ID: "vyos", Name: "VyOS", Vendor: "VyOS",
		Aliases:         []string{"vyatta"},
		DefaultCommands: lines("show configuration commands"),
		Secrets:         vyattaSecrets,
		Dialogue: Dialogue{
			Prompt:       re(`^[\w.\-]+@[\w.\-]+(:[^\s]*)?[$#]$`),
			PromptLines:  juniperPromptLines,
			Pager:        re(`^:$`),
			PagingOff:    []string{"set terminal length 0", "terminal length 0"},
			CommandError: re(`^\s*(Invalid command:|Incomplete command:)`),
		},
		// Restores from the set commands it backs up; the account needs
		// configuration rights (an admin-level login). Refusals: an
		// unknown or invalid path ("Set failed", "Delete failed"), a
		// commit VyOS will not make ("Commit failed"), a pending confirm.
		Restore: Restore{
			Method:      "vyos_commit_confirm",
			ConfigEnter: []string{"configure"},
			ConfigExit:  []string{"exit"},
			Save:        []string{"save"},
			ApplyError:  re(`^\s*(Set failed|Delete failed|Commit failed|Invalid command:|Incomplete command:|Another confirm is pending)`),
			Timer:       ConfirmTimer{Default: 5 * time.Minute, Min: time.Minute, Max: 60 * time.Minute},
		},
	})
}
