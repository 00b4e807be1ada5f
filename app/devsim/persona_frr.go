package devsim

import (
	"fmt"
	"strings"
)

// FRRouting's vtysh as an SSH account's shell: written from the session
// recorded on FRR 8.4.4 behind OpenSSH
// (app/collect/driver/testdata/recordings/frr_8.4.4_vtysh_ssh.yaml) and
// FRR's vtysh source (vtysh/vtysh.c of the frr-8.4.4 tag): the greeting,
// the enable-node prompt "r1# ", "(config)" prompts, "% Unknown command:
// …" for what it cannot parse, no pager and "terminal length 0"
// accepted silently. The configuration is BGP with a neighbour and a
// route-map per unit, as bgpd writes it back (blocks end with "exit").
func init() {
	addPersonality(Personality{
		Platform:        "frr",
		DefaultHostname: "r1",
		SSHVersion:      "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u10",
		MOTD:            "\nHello, this is FRRouting (version 8.4.4).\nCopyright 1996-2005 Kunihiro Ishiguro, et al.\n\n",
		UserPrompt:      "{host}# ",
		EnablePrompt:    "{host}# ",
		ConfigPrompt:    "{host}(config)# ",
		ConfigEnter:     []string{"configure terminal", "configure"},
		ConfigExit:      []string{"end"},
		ExitCommands:    []string{"exit", "quit"},
		PagingOff:       []string{"terminal length 0"},
		Replies:         map[string]string{"terminal length 0": ""},
		ConfigCommands:  []string{"show running-config", "write terminal"},
		VersionCommands: []string{"show version"},
		InvalidInput:    "% Unknown command: {cmd}\n",
	}, single(renderFRR), func(m *model) doc {
		var b builder
		b.f("FRRouting 8.4.4 (%s) on Linux(6.1.0-27-amd64).", m.host)
		b.l("Copyright 1996-2005 Kunihiro Ishiguro, et al.", "configured with:")
		b.l("    '--build=x86_64-linux-gnu' '--prefix=/usr' '--sysconfdir=/etc' '--localstatedir=/var' '--enable-multipath=256'")
		return b.d
	})
}

func renderFRR(m *model, n int) doc {
	var b builder
	b.l("Building configuration...", "", "Current configuration:", "!", "frr version 8.4.4", "frr defaults traditional")
	b.f("hostname %s", m.host)
	b.l("log syslog informational", "service integrated-vtysh-config", "!")
	b.f("router bgp %d", 64512+int(m.seed%1000))
	b.f(" bgp router-id 192.0.2.%d", 1+m.seed%254)
	b.l(" no bgp default ipv4-unicast")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f(" neighbor %s remote-as %d", ip(u.Net, 2), 65000+i)
		b.f(" neighbor %s description %s", ip(u.Net, 2), strings.ReplaceAll(u.Desc, " ", "-"))
		if i%5 == 0 {
			b.f(" neighbor %s password %s", ip(u.Net, 2), m.secret(fmt.Sprintf("bgp:%d", i), 12, base64Alphabet[:62]))
		}
		if u.Shut {
			b.f(" neighbor %s shutdown", ip(u.Net, 2))
		}
	}
	b.l(" !", " address-family ipv4 unicast")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("  network %s.0/24", u.Net)
		b.f("  neighbor %s activate", ip(u.Net, 2))
		b.f("  neighbor %s route-map RM-UNIT-%d-IN in", ip(u.Net, 2), i)
	}
	b.l(" exit-address-family", "exit", "!")
	for i := 0; i < n; i++ {
		u := m.unit(i)
		b.f("ip prefix-list PL-UNIT-%d seq 5 permit %s/24", i, u.Dest)
	}
	b.l("!")
	for i := 0; i < n; i++ {
		b.f("route-map RM-UNIT-%d-IN permit 10", i)
		b.f(" match ip address prefix-list PL-UNIT-%d", i)
		b.l("exit", "!")
	}
	b.l("end")
	return b.d
}
