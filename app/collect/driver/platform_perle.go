package driver

// Perle IOLAN console servers (SCG series).
//
// The capture of a real SCG50 shows a Cisco-like command line: "TEST-10#"
// after login ("Welcome to TEST-10 @ Line 2" before it), "terminal length
// 0" for the session, and a running configuration that opens with
// "Building running-config . . ." and ends with "! ***** END of
// configuration *****", with no time stamps in between. The pager and
// error texts are not in the capture; the Cisco-style ones are assumed.
// perleSecrets: the SCG running configuration writes local users'
// password hashes ("username u privilege admin password 8 $6$...") and
// the TACACS+ and RADIUS keys encrypted anew at every display ("key 7
// $0$...==").
var perleSecrets = []SecretRule{
	{Name: "user password", Match: `^username \S+ (?:\S+ )*?(?:password|secret) ` + secretTyped},
	{Name: "TACACS+/RADIUS key", Match: `^(?:tacacs|radius)-server (?:\S+ )*?key ` + secretTyped},
}

func init() {
	perle := unprivileged(cisco())
	perle.Prompt = re(`^[\w.\-]{1,64}[>#]$`)
	perle.PagingOff = []string{"terminal length 0"}
	Register(Platform{
		ID: "perle_iolan", Name: "Perle IOLAN", Vendor: "Perle",
		Aliases:         []string{"perle", "iolan"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        perle,
		Secrets:         perleSecrets,
		Notes:           "Log in with an administrator account: the running configuration needs it.",
	})
}
