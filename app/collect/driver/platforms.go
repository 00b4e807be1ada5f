package driver

// The platform table. Commands are what experienced operators run to get a
// configuration that can be restored as is: unmasked secrets where the
// platform masks them by default, no volatile state.
func init() {
	for _, info := range []Info{
		{ID: "cisco_ios", Name: "Cisco IOS", DefaultCommands: lines("show running-config")},
		{ID: "cisco_xe", Name: "Cisco IOS-XE", DefaultCommands: lines("show running-config")},
		{ID: "cisco_nxos", Name: "Cisco NX-OS", DefaultCommands: lines("show running-config")},
		{ID: "cisco_xr", Name: "Cisco IOS-XR", DefaultCommands: lines("show running-config")},
		// show running-config masks pre-shared keys on ASA; this does not.
		{ID: "cisco_asa", Name: "Cisco ASA", DefaultCommands: lines("more system:running-config")},
		{ID: "arista_eos", Name: "Arista EOS", DefaultCommands: lines("show running-config")},
		{ID: "juniper_junos", Name: "Juniper Junos", DefaultCommands: lines("show configuration | display omit")},
		{ID: "juniper_screenos", Name: "Juniper ScreenOS", DefaultCommands: lines("get config")},
		{ID: "huawei_vrp", Name: "Huawei VRP", DefaultCommands: lines("display current-configuration")},
		{ID: "huawei_vrpv8", Name: "Huawei VRP V8", DefaultCommands: lines("display current-configuration")},
		{ID: "hp_comware", Name: "HPE Comware", DefaultCommands: lines("display current-configuration")},
		{ID: "h3c_comware", Name: "H3C Comware", DefaultCommands: lines("display current-configuration")},
		{ID: "hp_procurve", Name: "HPE ProCurve / Aruba OS-Switch", DefaultCommands: lines("show running-config")},
		{ID: "aruba_aoscx", Name: "Aruba AOS-CX", DefaultCommands: lines("show running-config")},
		{ID: "ruijie_os", Name: "Ruijie RGOS", DefaultCommands: lines("show running-config")},
		{ID: "fortinet", Name: "Fortinet FortiOS", DefaultCommands: lines("show")},
		{ID: "paloalto_panos", Name: "Palo Alto PAN-OS", DefaultCommands: lines("show config running")},
		// RouterOS 7 hides secrets in /export unless asked.
		{ID: "mikrotik_routeros", Name: "MikroTik RouterOS", DefaultCommands: lines("/export show-sensitive")},
		{ID: "dell_os10", Name: "Dell OS10", DefaultCommands: lines("show running-configuration")},
		{ID: "extreme_exos", Name: "Extreme EXOS", DefaultCommands: lines("show configuration")},
		{ID: "vyos", Name: "VyOS", DefaultCommands: lines("show configuration commands")},
		{ID: "linux", Name: "Linux", DefaultCommands: lines(
			"cat /etc/hostname",
			"cat /etc/hosts",
			"cat /etc/resolv.conf",
			"cat /etc/network/interfaces",
		)},
	} {
		Register(info)
	}
}
