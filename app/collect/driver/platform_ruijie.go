package driver

func init() {
	ruijie := cisco()
	ruijie.PagingOff = []string{"terminal length 0"}
	Register(Platform{
		ID: "ruijie_os", Name: "Ruijie RGOS", Vendor: "Ruijie",
		Aliases:         []string{"ruijie", "rgos"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        ruijie,
		Noise:           ciscoHeader,
		Syslog:          []SyslogPattern{ciscoConfigI},
	})
}
