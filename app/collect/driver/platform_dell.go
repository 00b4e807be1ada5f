package driver

func init() {
	// OS10 logs administrators in privileged; the header names the release
	// and stamps the last change. RANCID 3 calls it dnos10.
	os10 := cisco()
	os10.PagingOff = []string{"terminal length 0"}
	Register(Platform{
		ID: "dell_os10", Name: "Dell OS10", Vendor: "Dell",
		Aliases:         []string{"os10", "dellos10", "dnos10"},
		DefaultCommands: lines("show running-configuration"),
		Dialogue:        os10,
		Noise: []string{
			`^! Version \S+$`,
			`^! Last configuration change at `,
		},
	})
}

// Dell N-series (OS6), PowerConnect and Force10 (OS9).
func init() {
	// OS6 (N1100–N3200, DNOS 6) is FASTPATH underneath: "--More-- or
	// (q)uit" pages, telnet asks "User:". The configuration header names
	// the release; nothing in it moves between two shows.
	os6 := cisco()
	os6.PagingOff = []string{"terminal length 0"}
	os6.Pager = re(`--More-- or \(q\)uit.{0,60}$|(?i)--\s?more\s?--$`)
	Register(Platform{
		ID: "dell_os6", Name: "Dell Networking OS6 (N-series)", Vendor: "Dell",
		Aliases:         []string{"os6", "dnos6"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        os6,
	})

	// PowerConnect 28xx/35xx/55xx (Marvell, like Cisco's small-business
	// switches: "User Name:", "terminal datadump") and 62xx/M-series
	// (FASTPATH: "terminal length 0", "--More-- or (q)uit"); both paging
	// commands are sent, the one a model lacks is refused harmlessly. An
	// sFlow receiver owned by a management station counts its timeout down
	// in the configuration.
	pc := cisco()
	pc.Prompt = re(`^[\w.\-@/: ]{1,64}(\([\w.\-/: ]{1,40}\))?[>#]$`)
	pc.PagingOff = []string{"terminal datadump", "terminal length 0"}
	pc.Pager = re(`More: <space>, +Quit: q.{0,40}One line: <return>$|--More-- or \(q\)uit.{0,60}$|(?i)^--\s?more\s?--$`)
	pc.PreLogin = credentialAnswers(re(`^User( Name)?:$`), re(`^Password:$`))
	Register(Platform{
		ID: "dell_powerconnect", Name: "Dell PowerConnect", Vendor: "Dell",
		Aliases:         []string{"powerconnect", "dell", "dellx"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        pc,
		Noise: []string{
			`^sflow \S+ destination owner \S+ timeout (?P<mask>\d+)$`,
		},
		Notes: "PowerConnect 2800/3500/5500 and 6200/7000/8000/M-series switches, and their X-series successors " +
			"(X1000/X4000, Oxidized's dellx); " +
			"hostnames with spaces are accepted.",
	})

	// OS9 (FTOS, Force10): the header stamps the last change (which moves
	// when anyone leaves configuration mode) and the last save. Leaving
	// configuration mode logs IOS's message behind the unit
	// ("%STKUNIT0-M:CP %SYS-5-CONFIG_I: Configured from console").
	// RANCID 3 calls it dnos9, Oxidized's Force10 model dnos.
	os9 := cisco()
	os9.PagingOff = []string{"terminal length 0"}
	Register(Platform{
		ID: "dell_os9", Name: "Dell Networking OS9 (FTOS)", Vendor: "Dell",
		Aliases:         []string{"ftos", "force10", "dell_force10", "dnos9", "dnos"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        os9,
		Noise: []string{
			`^! Last configuration change at `,
			`^! Startup-config last updated at `,
		},
		Syslog: []SyslogPattern{ciscoConfigI},
	})
}
