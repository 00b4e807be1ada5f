package driver

// Power gear: APC / Schneider Electric Network Management Cards and Eaton
// Network-M3 cards.

func init() {
	// Eaton Network-M3: SSH only. save_configuration prints the whole
	// configuration as one line of JSON; its -p passphrase is required
	// and encrypts the secrets in it, with a new salt each time, so the
	// "cyphered" values differ at every export. The export also carries
	// each account's last login attempt. Collected with SSH exec
	// requests, as the capture of a real card was.
	Register(Platform{
		ID: "eaton_network", Name: "Eaton Network-M3", Vendor: "Eaton",
		Aliases:         []string{"eatonnetwork", "eaton"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines("save_configuration -p backupd-export"),
		Dialogue: Dialogue{
			Exec:         true,
			Prompt:       re(`^[\w.\-@]{1,64}[>#$]$`),
			CommandError: re(`(?i)^\s*(?:unknown command|command not found|error: |usage: )`),
		},
		Noise: []string{
			`"cyphered"\s*:\s*"(?P<mask>[^"]*)"`,
			`"passphrase"\s*:\s*"(?P<mask>[^"]*)"`,
			`"lastAttemptISO"\s*:\s*"(?P<mask>[^"]*)"`,
			`"unsuccessfullTries"\s*:\s*(?P<mask>\d+)`,
		},
		Notes: "save_configuration needs a passphrase, which encrypts the secrets in the export and is needed again to " +
			"restore it. The default uses the passphrase backupd-export; set your own in a template " +
			"(save_configuration -p <passphrase>). The recorded capture used an empty one.",
	})
}
