package driver

// cumulusDetect is the default command of Cumulus Linux. Three dialects
// exist: NVUE (5.x, the default since 5.0), NCLU (3.x and 4.x, removed in
// 5.0) and plain files edited by hand (FRR's frr.conf and ifupdown2's
// interfaces, on any release with NVUE or NCLU unused). The first that
// answers wins: "nv" fails where NVUE is absent or stopped, "net" where
// NCLU is, and the files are what such a switch runs on.
const cumulusDetect = "nv config show -o commands 2>/dev/null || net show configuration commands 2>/dev/null || cat /etc/network/interfaces /etc/frr/frr.conf"

// cumulusValue is a value NVUE writes, in single quotes when it has to,
// or YAML writes: the "*" or "!" of an account without a password is
// none.
const cumulusValue = `(?:'(?P<secret>[^']*[^'*!][^']*)'|"(?P<secret>[^"]*[^"*!][^"]*)"|(?P<secret>[^\s'"*!{][^\s{]*))`

// cumulusSecrets are those of Linux (the files: frr.conf, snmpd.conf,
// /etc/tacplus_servers, interfaces...) and of NVUE ("nv set" commands and
// its YAML) and NCLU ("net add" commands): user password hashes, SNMP
// communities (read-only and trap), SNMPv3 users' keys, BGP neighbours'
// passwords, OSPF keys, TACACS+ and RADIUS secrets.
//
// NVUE's YAML writes SNMPv3 keys as mapping keys on lines of their own
// ("auth-sha:" then "  <key>:"): block rules mask the line after each.
var cumulusSecrets = append(append([]SecretRule{}, linuxSecrets...),
	SecretRule{Name: "user password", Match: `^nv set system aaa user \S+ (?:hashed-)?password ` + cumulusValue},
	SecretRule{Name: "SNMP community (NVUE/NCLU)", Match: `^(?:nv set service snmp-server|net add snmp-server) readonly-community(?:-v6)? ` + cumulusValue},
	SecretRule{Name: "SNMP trap community (NVUE/NCLU)", Match: `^(?:nv set service snmp-server|net add snmp-server) trap-destination \S+ (?:vrf \S+ )?community-password ` + cumulusValue},
	SecretRule{Name: "SNMPv3 keys (NVUE/NCLU)", Match: `^(?:nv set service snmp-server|net add snmp-server) username \S+ auth-(?:md5|sha) ` + cumulusValue +
		`(?: encrypt-(?:aes|des) ` + cumulusValue + `)?`},
	SecretRule{Name: "BGP neighbour password (NVUE/NCLU)", Match: `^(?:nv set vrf \S+ router bgp|net add bgp(?: vrf \S+)?) neighbor \S+ password ` + cumulusValue},
	SecretRule{Name: "OSPF key (NVUE/NCLU)", Match: `^(?:nv set interface \S+ router ospf authentication md5-key|net add interface \S+ ospf (?:message-digest-key \d+ md5|authentication-key)) ` + cumulusValue},
	SecretRule{Name: "TACACS+/RADIUS secret (NVUE)", Match: `^nv set system aaa (?:tacacs|radius) (?:\S+ )*?secret ` + cumulusValue},
	// "nv config show" (YAML): "hashed-password: '$6$...'", a BGP
	// neighbour's "password:", a TACACS+ server's "secret:", an OSPF
	// interface's "md5-key:".
	SecretRule{Name: "secret (NVUE YAML)", Match: `^\s+(?:hashed-password|password|secret|md5-key):\s+` + cumulusValue},
	// An SNMPv3 user's keys in NVUE's YAML are mapping keys, each on the
	// line after its kind: "auth-sha:", "<key>:", "encrypt-aes:",
	// "<key>:", "view: …".
	SecretRule{Name: "SNMPv3 authentication key (NVUE YAML)", Begin: `^\s*auth-(?:md5|sha):\s*$`, End: `^\s*(?:encrypt-(?:aes|des)|view):`},
	SecretRule{Name: "SNMPv3 privacy key (NVUE YAML)", Begin: `^\s*encrypt-(?:aes|des):\s*$`, End: `^\s*view:`},
)

func init() {
	// Cumulus Linux is Debian: bash over SSH, collected with exec
	// requests. Prompts (for the recordings replayed interactively) are
	// "cumulus@leaf1:mgmt:~$ " and after sudo "root@leaf1:mgmt:~# ",
	// preceded by bash's bracketed-paste switch (ESC[?2004h), which the
	// cleanup removes. No telnet server ships.
	Register(Platform{
		ID: "cumulus_linux", Name: "NVIDIA Cumulus Linux", Vendor: "NVIDIA",
		Aliases:         []string{"cumulus"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines(cumulusDetect),
		Secrets:         cumulusSecrets,
		Dialogue: Dialogue{
			Exec:   true,
			Prompt: re(`^[\w.\-]+@[\w.\-]+(:[\w.\-]+)?:[^\s]{0,128}[$#]$`),
			// sudo, for templates that read root-only files over telnet or
			// an interactive session (recorded on Cumulus VX 5.4).
			Enable:                 "sudo su -",
			EnableWithPasswordOnly: true,
			PasswordPrompt:         re(`^\[sudo\] password for [^:\s]+:$`),
			Privileged:             re(`#$`),
			EnableFailed:           re(`(?m)^Sorry, try again\.|is not in the sudoers file`),
			CommandError:           re(`^(-?bash: )?(line \d+: )?\S+: command not found$`),
		},
		Notes: "One command detects the dialect: NVUE (\"nv config show -o commands\", Cumulus Linux 5.x), else NCLU (\"net show configuration commands\", 3.x/4.x), " +
			"else the files /etc/network/interfaces and /etc/frr/frr.conf. To pin one, give the device a template with that command alone " +
			"(e.g. \"nv config show --color off\" for NVUE's YAML, or \"cat /etc/frr/frr.conf\" and the other files you keep, as Oxidized does).",
	})
}
