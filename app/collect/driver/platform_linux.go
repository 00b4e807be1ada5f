package driver

func init() {
	// Linux over SSH: exec requests, no prompt guessing. Over telnet any
	// shell prompt ending in $ # % or > will do. No CommandError: a
	// missing file is part of what the host looks like.
	Register(Platform{
		ID: "linux", Name: "Linux", Vendor: "Linux",
		Aliases: []string{"linuxgeneric"},
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
