package driver

// frrSecrets are the secrets FRR (and Quagga before it) writes in its
// running configuration and its files (frr.conf, zebra.conf,
// bgpd.conf...): the vty and enable passwords (type 8 once encrypted),
// BGP neighbours' passwords, the keys of OSPF, OSPFv3, IS-IS and RIP and
// of key chains. Linux hosts apply them to the files they read. Each
// also matches its "no" form, which a restore types to remove the line:
// the session's transcript quotes it.
var frrSecrets = []SecretRule{
	{Name: "routing daemon password", Match: `^\s*(?:no )?(?:enable )?password (?:8 )?` + secretValue},
	{Name: "BGP neighbour password", Match: `^\s*(?:no )?neighbor \S+ password ` + secretValue},
	{Name: "routing protocol key", Match: `^\s*(?:no )?(?:ip ospf authentication-key|ip ospf message-digest-key \d+ md5|ipv6 ospf6 authentication keyid \d+ \S+ key|` +
		`isis password (?:clear|md5)|(?:area|domain)-password (?:clear|md5)|ip rip authentication string|key-string) ` + secretValue},
}

func init() {
	// FRRouting's integrated shell, vtysh, as the login shell of an SSH
	// account (sshd's ForceCommand, or a user whose shell is vtysh), on
	// routers, route servers and hosts built on FRR. The dialogue is
	// recorded from FRR 8.4.4 behind OpenSSH (internal/testfrr):
	//
	//   - vtysh greets with "Hello, this is FRRouting (version X)." and
	//     lands in the enable node, "r1# "; configuration nodes show as
	//     "r1(config)# ", "r1(config-router-af)# "…;
	//   - it never pages unless the account sets VTYSH_PAGER or someone
	//     types "terminal paginate"; "terminal length 0" is accepted
	//     without a word;
	//   - a command it cannot parse gets "% Unknown command: …",
	//     "% Command incomplete: …" or "% Ambiguous command: …", daemons
	//     answer "% …" too, and a command for a daemon that is not
	//     started gets "<daemon> is not running";
	//   - a forced command also answers exec requests with the shell, so
	//     the session is interactive.
	//
	// "show running-config" prints "Building configuration...", a blank
	// line and "Current configuration:" before the configuration; they
	// are kept, and the build banner is ignored when comparing, as
	// Cisco's is. "frr version" changes with every upgrade while the
	// configuration does not.
	Register(Platform{
		ID: "frr", Name: "FRRouting (vtysh)", Vendor: "FRRouting",
		Aliases:         []string{"frrouting"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("show running-config"),
		Noise:           []string{`^Building configuration\.\.\.$`, `^frr version `},
		Secrets:         frrSecrets,
		Dialogue: Dialogue{
			Prompt:       re(`^[\w.\-]+(\([\w.\-]+\))?#$`),
			PagingOff:    []string{"terminal length 0"},
			CommandError: re(`^% |\bis not running$`),
		},
		// In configuration mode vtysh answers a line it takes with
		// nothing but the next prompt: any text is a refusal, whether
		// "% ..." from the parser or a daemon ("% Specify remote-as or
		// peer-group commands first"), or a daemon's plain sentence ("BGP
		// is already running; AS is 65001", "staticd is not running").
		Restore: Restore{
			Method:      "frr_vtysh",
			ConfigEnter: []string{"configure terminal"},
			ConfigExit:  []string{"end"},
			Save:        []string{"write memory"},
			ApplyError:  re(`\S`),
		},
		Notes: "The SSH account must land in vtysh (sshd ForceCommand /usr/bin/vtysh, or vtysh as its login shell) with the rights to read the " +
			"configuration (root or the frrvty group). For a Linux host where FRR is one part among others, use the linux platform and read " +
			"/etc/frr/frr.conf.",
	})
}
