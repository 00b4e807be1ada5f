package driver

// edgeosSecrets are those of VyOS (vyattaSecrets) and the UNMS / UISP
// connection string, whose key lets a controller take the router over
// ("wss://uisp.example.net:443+<key>+allowSelfSignedCertificate").
var edgeosSecrets = append(append([]SecretRule{}, vyattaSecrets...),
	SecretRule{Name: "UNMS connection key", Match: `^set service unms connection ` + vyattaValue})

func init() {
	// Ubiquiti EdgeOS (EdgeRouter) is Vyatta: the operational shell is
	// vbash with the prompt "ubnt@ubnt:~$ ", configuration mode
	// "ubnt@ubnt# ". "| no-more" keeps the pager (less, prompt ":")
	// out of the output; where it is ignored the pager is answered.
	// "show configuration commands" prints every setting as a set
	// command, encrypted passwords included, which is what "load"
	// restores. Errors: "Invalid command: show [foo]". Written from
	// Ubiquiti's EdgeOS CLI documentation and the Vyatta command
	// reference; no public capture.
	Register(Platform{
		ID: "ubiquiti_edgeos", Name: "Ubiquiti EdgeOS", Vendor: "Ubiquiti",
		Aliases:         []string{"edgeos", "ubiquiti_edgerouter", "edgerouter", "edgerouterbird"},
		DefaultCommands: lines("show configuration commands | no-more"),
		Secrets:         edgeosSecrets,
		Dialogue: Dialogue{
			Prompt:       re(`^[\w.\-]+@[\w.\-]+(:[^\s]*)?[$#]$`),
			PromptLines:  juniperPromptLines,
			Pager:        re(`^:$`),
			PagingOff:    []string{"terminal length 0"},
			CommandError: re(`^\s*(Invalid command:|Incomplete command:)`),
		},
		Notes: "Collects \"show configuration commands\" (set commands, restorable with load) in the operational shell. " +
			"RANCID's edgerouterbird type also kept BIRD's /config/opt/bird/etc/bird.conf and bird6.conf: " +
			"add \"cat\" of them to a template to keep them too.",
	})
}
