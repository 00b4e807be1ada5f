package driver

// Power gear: APC / Schneider Electric Network Management Cards and Eaton
// Network-M3 cards.

// apcSecrets: config.ini writes SNMPv1 communities
// ("AccessControl1Community=public", "TrapReceiver1Community=") in clear;
// the passwords and phrases it accepts on import (AdminPassword,
// UserProfile1AuthPhrase, RemotePassword of the FTP client...) are
// masked wherever they appear.
var apcSecrets = []SecretRule{
	{Name: "SNMP community", Match: `^\s*(?:AccessControl|TrapReceiver)[0-9]+Community\s*=\s*(?P<secret>.*\S)`},
	{Name: "password or passphrase", Match: `^\s*[A-Za-z0-9]*(?:Password|Phrase|Secret)\s*=\s*(?P<secret>.*\S)`},
}

// eatonString is a JSON string's text (escapes included).
const eatonString = `"(?P<secret>(?:[^"\\]|\\.)+)"`

// eatonSecrets: the Network-M3 export is JSON (one line as the card
// prints it). Every secret is an object {"plaintext": null, "cyphered":
// "..."} (SMTP, LDAP bind, RADIUS, SNMPv3, proxy, 802.1X passwords),
// encrypted with the export's passphrase, whose check value is
// "passphrase"; accounts keep their earlier password hashes in
// "history"; SNMPv1 communities and trap receivers' communities are in
// clear.
var eatonSecrets = []SecretRule{
	{Name: "encrypted secret", Match: `"(?:cyphered|ciphered|plaintext)"\s*:\s*` + eatonString},
	{Name: "export passphrase", Match: `"passphrase"\s*:\s*` + eatonString},
	// The earlier hashes, masked together inside the list's outer
	// quotes: one tag for the list.
	{Name: "password history", Match: `"history"\s*:\s*\[\s*"(?P<secret>[^\]]*?)"\s*\]`},
	{Name: "SNMP community", Match: `"read(?:Only|Write)"\s*:\s*\{\s*"name"\s*:\s*` + eatonString},
	{Name: "SNMP trap community", Match: `"community"\s*:\s*` + eatonString},
}

func init() {
	// APC Network Management Card (AOS): SSH only (the captured card has
	// telnet disabled, and the file below needs SSH). The
	// card's restorable configuration is the file config.ini, which it
	// hands out only over SCP or FTP; its command line ("apc>" or
	// "user@apc>", no enable, no pager, every answer led by "E000:
	// Success" or an error code such as "E101: Command Not Found") prints
	// identity and status only. So the default command is the file,
	// fetched over SCP on the same SSH login (see SCPPrefix): the capture
	// of a real AP9640 card holds it beside the CLI answers. config.ini's
	// header says when and by whom the file was generated, which moves at
	// every download; about's uptime moves on its own too (for templates
	// that add it).
	Register(Platform{
		ID: "apc_aos", Name: "APC Network Management Card (AOS)", Vendor: "APC / Schneider Electric",
		Aliases:         []string{"apcaos", "apc"},
		Transports:      []string{"ssh"},
		DefaultCommands: lines(SCPPrefix + "config.ini"),
		Secrets:         apcSecrets,
		Dialogue: Dialogue{
			Prompt:       re(`^(?:\S{1,64}@)?apc>$`),
			CommandError: re(`^E1\d\d: `),
		},
		Noise: []string{
			`^; Configuration file, generated on \d\d/\d\d/\d{4} at \d\d:\d\d:\d\d by `,
			`^Management Uptime:\s`,
		},
		Notes: "The default command scp:config.ini fetches the card's config.ini over SCP on the SSH login: the whole " +
			"restorable configuration (network, DNS, system identity, date and time, users, SNMP, event actions; " +
			"it can be uploaded to a card the same way). The card must have SCP enabled, which it is by default with " +
			"SSH. CLI commands such as about or upsabout can be added in a template.",
	})

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
		Secrets:         eatonSecrets,
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
