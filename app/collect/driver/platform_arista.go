package driver

func init() {
	// EOS names its image in the header ("! device: leaf1 (DCS-7050SX-64,
	// EOS-4.28.3M)"), which an upgrade alone changes, and stamps the last
	// save of the startup configuration.
	eos := cisco()
	eos.PagingOff = []string{"terminal length 0", "terminal width 32767"}
	Register(Platform{
		ID: "arista_eos", Name: "Arista EOS", Vendor: "Arista",
		Aliases:         []string{"eos", "arista"},
		DefaultCommands: lines("show running-config"),
		Dialogue:        eos,
		Noise: []string{
			`^! device: \S+ \(.*\)$`,
			`^! Startup-config last modified at `,
		},
		Syslog: []SyslogPattern{ciscoConfigI},
	})
}
