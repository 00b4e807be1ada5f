package devsim

import (
	"fmt"
	"strings"
)

// versionDoc is the answer to the platform's `show version`-like commands.
func versionDoc(m *model) doc {
	if fn, ok := versionDocs[m.platform]; ok {
		return fn(m)
	}
	var b builder
	serial := strings.ToUpper(m.secret("serial", 11, hexDigits))
	uptime := func(v volatile) string {
		mins := 60*24*40 + v.Show
		return fmt.Sprintf("%d weeks, %d days, %d hours, %d minutes", mins/10080, mins%10080/1440, mins%1440/60, mins%60)
	}
	switch m.platform {
	case "cisco_ios", "cisco_xe", "ruijie_os", "cisco_asa", "cisco_xr", "cisco_nxos", "dell_os10":
		ver := map[string]string{
			"cisco_ios": "Cisco IOS Software, C2960X Software (C2960X-UNIVERSALK9-M), Version 15.2(7)E9, RELEASE SOFTWARE (fc2)",
			"cisco_xe":  "Cisco IOS XE Software, Version 17.09.04a",
			"ruijie_os": "System description      : Ruijie Gigabit Security & Intelligence Access Switch (S2910-24GT4XS-E) By Ruijie Networks.",
			"cisco_asa": "Cisco Adaptive Security Appliance Software Version 9.16(4)",
			"cisco_xr":  "Cisco IOS XR Software, Version 7.5.2",
			"cisco_nxos": "Cisco Nexus Operating System (NX-OS) Software\n" +
				"  NXOS: version 9.3(10)",
			"dell_os10": "Dell EMC Networking OS10 Enterprise\nOS Version: 10.5.4.2",
		}[m.platform]
		b.l(ver, "Technical Support: http://www.cisco.com/techsupport", "Copyright (c) 1986-2023 by Cisco Systems, Inc.", "")
		b.vol(func(v volatile) string { return m.host + " uptime is " + uptime(v) })
		b.l("System returned to ROM by power-on", "")
		b.f("Processor board ID %s", serial)
		b.l("48 Gigabit Ethernet interfaces", "Configuration register is 0x2102")
	case "arista_eos":
		b.l("Arista DCS-7050SX3-48YC8", "Hardware version: 11.00")
		b.f("Serial number: %s", serial)
		b.l("", "Software image version: 4.30.2F", "Architecture: x86_64")
		b.vol(func(v volatile) string { return "Uptime: " + uptime(v) })
	case "juniper_junos":
		b.f("Hostname: %s", m.host)
		b.l("Model: srx300", "Junos: 22.4R3-S2.11", "JUNOS Software Release [22.4R3-S2.11]")
	case "juniper_screenos":
		b.l("Product Name: SSG5-Serial")
		b.f("Serial Number: %s, Control Number: 00000000", serial)
		b.l("Hardware Version: 0710(0)-(00), FPGA checksum: 00000000, VLAN1 IP (0.0.0.0)", "Software Version: 6.3.0r27.0, Type: Firewall+VPN")
	case "huawei_vrp", "huawei_vrpv8":
		b.l("Huawei Versatile Routing Platform Software")
		if m.platform == "huawei_vrpv8" {
			b.l("VRP (R) software, Version 8.210 (CE6881 V300R021C10SPC600)")
		} else {
			b.l("VRP (R) software, Version 5.170 (S5735 V200R019C10SPC500)")
		}
		b.l("Copyright (C) 2000-2023 HUAWEI TECH Co., Ltd.")
		b.vol(func(v volatile) string { return "HUAWEI S5735 Routing Switch uptime is " + uptime(v) })
	case "hp_comware", "h3c_comware":
		vendor := map[string]string{"hp_comware": "HPE", "h3c_comware": "H3C"}[m.platform]
		b.f("%s Comware Software, Version 7.1.070, Release 6635P07", vendor)
		b.l("Copyright (c) 2004-2023 New H3C Technologies Co., Ltd. All rights reserved.")
		b.vol(func(v volatile) string { return vendor + " S5130S-52S-EI uptime is " + uptime(v) })
	case "hp_procurve":
		b.l("Image stamp:    /ws/swbuildm/rel_wallace_qaoff/code/build/anm(swbuildm_rel_wallace_qaoff_rel_wallace)", "                Feb 25 2020 12:38:56", "                WB.16.10.0012", "                474", "Boot Image:     Primary")
	case "aruba_aoscx":
		b.l("-----------------------------------------------------------------------------", "ArubaOS-CX", "(c) Copyright 2017-2023 Hewlett Packard Enterprise Development LP", "-----------------------------------------------------------------------------", "Version      : PL.10.10.1090", "Build Date   : 2023-10-03 19:00:03 UTC", "Active Image : primary")
	case "fortinet":
		b.l("Version: FortiGate-60F v7.4.8,build2795,250523 (GA.M)")
		b.f("Serial-Number: FGT60F%s", serial)
		b.f("Hostname: %s", m.host)
		b.l("Operation Mode: NAT", "Current virtual domain: root", "Max number of virtual domains: 10")
		b.vol(func(v volatile) string { return "System time: " + v.Now.UTC().Format("Mon Jan  2 15:04:05 2006") })
	case "paloalto_panos":
		b.f("hostname: %s", m.host)
		b.l("ip-address: 192.0.2.60", "model: PA-220")
		b.f("serial: 0120%s", serial[:8])
		b.l("sw-version: 10.2.9-h1", "app-version: 8799-8509")
		b.vol(func(v volatile) string { return "uptime: " + uptime(v) })
	case "mikrotik_routeros":
		b.vol(func(v volatile) string { return "                   uptime: " + uptime(v) })
		b.l("                  version: 7.10.1 (stable)", "               build-time: Jun/27/2023 09:03:02", "              free-memory: 244.1MiB", "             total-memory: 1024.0MiB", "                      cpu: ARMv7", "               board-name: RB4011iGS+", "                 platform: MikroTik")
	case "extreme_exos":
		b.f("Switch      : 800619-00-05 %s Rev 5.0 BootROM: 2.0.1.7    IMG: 31.7.1.4", serial)
		b.l("PSU-1       :", "Image   : ExtremeXOS version 31.7.1.4 by release-manager", "BootROM : Default 2.0.1.7    Alt 2.0.1.7")
	case "vyos":
		b.l("Version:          VyOS 1.4.0", "Release train:    sagitta", "Built by:         autobuild@vyos.net", "Architecture:     x86_64", "Boot via:         installed image", "System:           VMware")
	case "linux":
		b.f("Linux %s 5.15.0-105-generic #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux", m.host)
	}
	return b.d
}
