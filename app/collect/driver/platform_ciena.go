package driver

// Ciena SAOS. SAOS 6 (3900/5100 series) and SAOS 10 (5130/5160/5170 and
// later) share the "host> " prompt ("host*> " on SAOS 6 while the
// configuration is unsaved) but not their commands: SAOS 6 turns paging
// off with `system shell session set more off` and prints its
// configuration with `configuration show`, SAOS 10 uses
// `set session more off` and `show running config` (as recorded on a
// CN5171, testdata/recordings/saos10_*). Both paging commands are sent,
// the one the release does not know is rejected and tolerated; the
// configuration command is SAOS 10's (see Notes).
// saosSecrets: SAOS 10 writes its OpenConfig-based AAA settings as one
// line each: local users' password hashes ("system aaa authentication
// users user "u" config password "$6$..."", or password-hashed) and the
// RADIUS and TACACS+ servers' secret-key. SAOS 6 writes users with their
// encrypted secret ("user create user u access-level super secret
// <hex>").
var saosSecrets = []SecretRule{
	{Name: "user password hash", Match: `^system aaa authentication users user \S+ config (?:\S+ \S+ )*?password(?:-hashed)? ` + secretValue},
	{Name: "RADIUS/TACACS+ secret", Match: `\bsecret-key ` + secretValue},
	{Name: "user secret (SAOS 6)", Match: `^user create user \S+ (?:\S+ )*?(?:secret|password) ` + secretValue},
}

func init() {
	Register(Platform{
		ID: "ciena_saos", Name: "Ciena SAOS", Vendor: "Ciena",
		Aliases:         []string{"saos", "saos10", "ciena"},
		DefaultCommands: lines("show running config"),
		Secrets:         saosSecrets,
		Dialogue: Dialogue{
			Prompt:         re(`^[\w.\-]{1,63}\*?> ?$`),
			PromptVolatile: re(`\*?>$`),
			// SAOS 6 "Press any key to continue (Q to quit)"; SAOS 10
			// "--More--".
			Pager:     re(`(?i)(press any key to continue.*|--\s?more\s?--)$`),
			PagingOff: []string{"set session more off", "system shell session set more off"},
			CommandError: re(`^\s*(SHELL PARSER FAILURE|Error: |% ?(Invalid|Unknown|Incomplete|Ambiguous)|` +
				`syntax error|unknown command)`),
		},
		// SAOS 10 heads some listings with when and where they were made.
		Noise: []string{`^! Created: `, `^! On terminal: `},
		Notes: "The default command is SAOS 10's \"show running config\". For SAOS 6 devices use a template with " +
			"\"configuration show\"; paging is turned off on both.",
	})
}
