package driver

// cumulusDetect is the default command of Cumulus Linux. Three dialects
// exist: NVUE (5.x, the default since 5.0), NCLU (3.x and 4.x, removed in
// 5.0) and plain files edited by hand (FRR's frr.conf and ifupdown2's
// interfaces, on any release with NVUE or NCLU unused). The first that
// answers wins: "nv" fails where NVUE is absent or stopped, "net" where
// NCLU is, and the files are what such a switch runs on.
const cumulusDetect = "nv config show -o commands 2>/dev/null || net show configuration commands 2>/dev/null || cat /etc/network/interfaces /etc/frr/frr.conf"

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
