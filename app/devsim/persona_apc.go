package devsim

import (
	"fmt"
	"strings"
)

// APC Network Management Card (AOS). Its restorable configuration is the
// file config.ini, which the card hands out over SCP (or FTP) and never
// prints at its command line: the personality's configuration command is
// the file "scp:config.ini", served to an "scp -f config.ini" exec request
// (see scp.go). The file's header, [NetworkTCP/IP] and [EventActionConfig]
// follow the capture of a real AP9640 card in a Smart-UPS 750
// (testdata/recordings/apcos_SMT750IC_v2.5.0.8 in app/collect/driver); the
// other sections are written from the setting names of APC's NMC user's
// guides (the capture's file holds only those two sections). The banner,
// prompt and the answers to about and upsabout are the capture's; the
// telnet login and the error text are the ones the NMC command-line guide
// documents.
func init() {
	addPersonality(Personality{
		Platform:        "apc_aos",
		DefaultHostname: "APC-0007",
		SSHVersion:      "SSH-2.0-cryptlib",
		MOTD: "\n\nSchneider Electric                      Network Management Card AOS    v2.5.0.8\n" +
			"(c) Copyright 2023 All Rights Reserved  Smart-UPS APP                  v2.5.0.6\n" +
			"-------------------------------------------------------------------------------\n" +
			"Name      : {host}                                  Date : 01/01/2026\n" +
			"Contact   : noc@example.net                         Time : 12:12:12\n" +
			"Location  : DC1                                     User : Administrator\n" +
			"Up Time   : 42 Days 1 Hour 7 Minutes                Stat : P+ N4+ N6+ A+\n" +
			"-------------------------------------------------------------------------------\n" +
			"\n\nType ? for command listing\nUse tcpip command for IP address(-i), subnet(-s), and gateway(-g)\n\n",
		UserPrompt:      "apc>",
		EnablePrompt:    "apc>",
		ConfigPrompt:    "apc>",
		ExitCommands:    []string{"exit", "quit", "bye"},
		ConfigCommands:  []string{"scp:config.ini"},
		VersionCommands: []string{"about"},
		Replies: map[string]string{
			"upsabout": "E000: Success\nModel: Smart-UPS 750\nSKU: SMT750IC\nSerial Number: 3S2100000001\n" +
				"Firmware Revision: UPS 03.8 (ID1015) \nManufacture Date: 01/24/2021\nApparent Power Rating: 750 VA\n" +
				"Real Power Rating: 500 W\nBattery SKU: APCRBC48\n\n\n",
		},
		InvalidInput:        "E101: Command Not Found\n",
		LoginUserPrompt:     "User Name : ",
		LoginPasswordPrompt: "Password  : ",
		LoginFailed:         "\n",
	}, single(renderAPCConfigINI), func(m *model) doc {
		serial := apcSerial(m)
		var about builder
		about.l("E000: Success", "Hardware Factory", "---------------", "Model Number: \t\tAP9640")
		about.f("Serial Number: \t\tF2%s", serial)
		about.l("Hardware Revision: \t5", "Manufacture Date: \t01/01/2022")
		about.f("MAC Address: \t\t%s", apcMAC(serial))
		about.vol(func(v volatile) string {
			mins := 60*24*42 + v.Show
			return fmt.Sprintf("Management Uptime: \t%d Days %d Hours %d Minutes", mins/1440, mins%1440/60, mins%60)
		})
		for _, mod := range [][5]string{
			{"Application Module", "su", "v2.5.0.6", "May 12 2023", "19:08:29"},
			{"APC OS(AOS)", "aos", "v2.5.0.8", "May 12 2023", "19:08:29"},
			{"APC Boot Monitor", "boot", "v1.5.1.1", "Mar 27 2023", "12:10:09"},
		} {
			about.l("", mod[0], "---------------", "Name: \t\t\t"+mod[1], "Version: \t\t"+mod[2], "Date: \t\t\t"+mod[3], "Time: \t\t\t"+mod[4])
		}
		about.l("")
		return about.d
	})
}

func apcSerial(m *model) string { return strings.ToUpper(m.secret("serial", 10, hexDigits)) }

// apcMAC is the card's MAC address as config.ini's Override key and the
// about command print it: "28 29 86 xx xx xx".
func apcMAC(serial string) string {
	return fmt.Sprintf("28 29 86 %s %s %s", serial[:2], serial[2:4], serial[4:6])
}

// renderAPCConfigINI writes the card's config.ini: n event actions (the
// file's bulk on a real card, one per event code) make it grow. The
// header line with the generation time and the user changes at every
// download.
func renderAPCConfigINI(m *model, n int) doc {
	var b builder
	b.l("; Schneider Electric", "; Network Management Card AOS v2.5.0.8", "; Smart-UPS APP v2.5.0.6",
		"; (c) 2023 Schneider Electric. All rights reserved.")
	b.vol(func(v volatile) string {
		return "; Configuration file, generated on " + v.Now.UTC().Format("01/02/2006 at 15:04:05") + " by Administrator " + m.user
	})
	domain := "example.net"
	b.l("", "[NetworkTCP/IP]")
	b.f("Override=%s", apcMAC(apcSerial(m)))
	b.l("SystemIP=0.0.0.0", "SubnetMask=0.0.0.0", "DefaultGateway=0.0.0.0", "IPv4=enabled", "BootMode=DHCP Only")
	b.f("HostName=%s", m.host)
	b.f("DomainName=%s", domain)
	b.l("PortSpeed=Auto", "DHCPBootpVendorClass=APC", "DHCPBootpClientID=MAC")

	b.l("", "[NetworkDNS]", "OverrideManualDNSSettings=disabled", "PrimaryDNSServerIP=192.0.2.53",
		"SecondaryDNSServerIP=192.0.2.54", "SystemNameSync=enabled")
	b.f("HostName=%s", m.host)
	b.f("DomainName=%s", domain)

	b.l("", "[SystemID]")
	b.f("Name=%s", m.host)
	b.l("Contact=noc@example.net", "Location=DC1", "Message=")

	b.l("", "[SystemDate/Time]", "NTPEnable=enabled", "NTPPrimaryServer=192.0.2.123", "NTPSecondaryServer=0.0.0.0",
		"NTPUpdateInterval=168", "TimeZone=+00:00")

	b.l("", "[SystemUserManager]", "SuperUserName=apc", "SuperUserAccess=enabled")
	b.f("AdministratorUserName=%s", m.user)
	b.l("AdministratorAccess=enabled", "DeviceUserName=device", "DeviceUserAccess=disabled",
		"ReadOnlyUserName=readonly", "ReadOnlyUserAccess=enabled")

	// Up to four SNMP trap receivers, as the card offers.
	b.l("", "[NetworkSNMP]", "SNMPv1Access=enabled", "SNMPv3Access=enabled")
	for i := 0; i < min(n, 4); i++ {
		u := m.unit(i)
		b.f("TrapReceiver%dNMSIP=%s", i+1, u.Remote)
		b.f("TrapReceiver%dGeneration=%s", i+1, map[bool]string{false: "enabled", true: "disabled"}[u.Shut])
	}

	b.l("", "[EventActionConfig]")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		action := "ES"
		if u.Shut {
			action = "S"
		}
		b.f("; Event %04X: %s.", 0x100+i, u.Desc)
		b.f("; SNMP Trap: %d", u.Service)
		b.f("E%04X=%s,E[:::],T[:::::]", 0x100+i, action)
		b.l("")
	}
	return b.d
}
