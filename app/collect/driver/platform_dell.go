package driver

func init() {
	// OS10 logs administrators in privileged; the header names the release
	// and stamps the last change.
	os10 := cisco()
	os10.PagingOff = []string{"terminal length 0"}
	Register(Platform{
		ID: "dell_os10", Name: "Dell OS10", Vendor: "Dell",
		Aliases:         []string{"os10", "dellos10"},
		DefaultCommands: lines("show running-configuration"),
		Dialogue:        os10,
		Noise: []string{
			`^! Version \S+$`,
			`^! Last configuration change at `,
		},
	})
}
