package db_test

// A generator of realistic configuration histories for the storage
// benchmarks (storage_bench_test.go): one Cisco Catalyst style running
// configuration of about 60 KB (interfaces with descriptions, VLANs,
// SVIs, routing, static routes, ACLs, prefix lists, a certificate, a
// banner) and its nightly versions, each changing about 2% of its lines
// with a mix of edits, inserts and deletes, the way an operations team
// edits a device: descriptions, access VLANs, ACL entries, routes and
// prefix lists, plus the "last configuration change" stamps IOS writes.
// The same seed gives the same history.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aymanbagabas/go-udiff"
	"github.com/klauspost/compress/zstd"
)

// genKind is what a configuration line is, for the nightly changes:
// which lines an edit may rewrite, and where a line may be inserted or
// deleted.
type genKind uint8

const (
	kindFixed    genKind = iota // never changes
	kindStamp                   // "! Last configuration change at ...", rewritten every night
	kindDesc                    // an interface description
	kindAccess                  // "switchport access vlan N"
	kindVlanName                // a VLAN's name
	kindACL                     // an entry of an extended ACL
	kindRoute                   // a static route
	kindPrefix                  // a prefix-list entry
)

type genLine struct {
	text string
	kind genKind
}

// configGen holds the current version of one device's configuration.
type configGen struct {
	rng      *rand.Rand
	host     string
	lines    []genLine
	size     int // bytes of Text, newline included per line
	target   int
	night    time.Time
	versions int
	seq      int // makes inserted names unique
	hosts    []string
}

// genChangeFraction is the share of lines a night changes.
const genChangeFraction = 0.02

var (
	genRoles  = []string{"srv-db", "srv-web", "srv-app", "esx", "nas", "ap", "printer", "cam", "phone", "ups", "pdu", "fw", "lb", "kvm", "badge", "hvac"}
	genRooms  = []string{"1F", "2F", "3F", "4F", "DC1", "DC2", "LAB", "MDF", "IDF1", "IDF2"}
	genVlans  = []int{10, 20, 30, 40, 100, 101, 102, 110, 120, 130, 140, 150, 200, 210, 220, 300, 310, 400, 500, 600, 700, 800, 900, 999}
	genNames  = []string{"USERS", "VOICE", "PRINTERS", "SERVERS", "MGMT", "GUEST", "CAMERAS", "IOT", "STORAGE", "BACKUP", "DMZ", "LAB", "WIFI-CORP", "WIFI-GUEST", "BUILDING", "HVAC"}
	genPorts  = []int{443, 443, 443, 80, 80, 22, 22, 53, 25, 123, 161, 389, 445, 514, 636, 1433, 3306, 3389, 5432, 8080, 8443, 9100}
	genProtos = []string{"tcp", "tcp", "tcp", "udp", "udp", "icmp", "ip"}
	genTicket = []string{"CHG", "INC", "RITM"}
)

func newConfigGen(seed uint64, targetSize int) *configGen {
	g := &configGen{
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		target: targetSize,
		night:  time.Date(2025, 11, 25, 2, 0, 0, 0, time.UTC),
	}
	// ACLs name the same servers and clients again and again.
	for i := range 96 {
		g.hosts = append(g.hosts, g.ip(i%4))
	}
	g.host = fmt.Sprintf("%s-core-sw%02d", strings.ToLower(genRooms[g.rng.IntN(len(genRooms))]), 1+g.rng.IntN(40))
	g.build()
	g.versions = 1
	return g
}

func (g *configGen) addf(kind genKind, format string, args ...any) {
	g.add(kind, fmt.Sprintf(format, args...))
}

func (g *configGen) add(kind genKind, text string) {
	g.lines = append(g.lines, genLine{text: text, kind: kind})
	g.size += len(text) + 1
}

func (g *configGen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *configGen) ip(prefix int) string {
	return fmt.Sprintf("10.%d.%d.%d", prefix, g.rng.IntN(256), 1+g.rng.IntN(254))
}

func (g *configGen) descText() string {
	switch g.rng.IntN(4) {
	case 0:
		return fmt.Sprintf(" description %s-%s-%02d %s (patch %s-%c-%02d)", g.pick(genRoles), strings.ToLower(g.pick(genRooms)), 1+g.rng.IntN(40),
			[]string{"eth0", "eth1", "mgmt", "uplink"}[g.rng.IntN(4)], g.pick(genRooms), 'A'+rune(g.rng.IntN(6)), 1+g.rng.IntN(48))
	case 1:
		return fmt.Sprintf(" description %s-%s-%02d [%s%07d]", g.pick(genRoles), strings.ToLower(g.pick(genRooms)), 1+g.rng.IntN(40), g.pick(genTicket), g.rng.IntN(10000000))
	case 2:
		return fmt.Sprintf(" description User desk %s-%03d", g.pick(genRooms), 1+g.rng.IntN(300))
	default:
		return fmt.Sprintf(" description %s %s-%02d", strings.ToUpper(g.pick(genRoles)), g.pick(genRooms), 1+g.rng.IntN(40))
	}
}

func (g *configGen) accessText() string {
	return fmt.Sprintf(" switchport access vlan %d", genVlans[g.rng.IntN(len(genVlans))])
}

func (g *configGen) vlanNameText() string {
	return fmt.Sprintf(" name %s-%s", g.pick(genNames), g.pick(genRooms))
}

func (g *configGen) aclText() string {
	if g.rng.IntN(12) == 0 {
		g.seq++
		return fmt.Sprintf(" remark %s%07d allow %s to %s", g.pick(genTicket), g.rng.IntN(10000000), g.pick(genRoles), g.pick(genNames))
	}
	action := "permit"
	if g.rng.IntN(6) == 0 {
		action = "deny"
	}
	proto := g.pick(genProtos)
	src := "any"
	switch g.rng.IntN(3) {
	case 0:
		src = "host " + g.pick(g.hosts)
	case 1:
		src = fmt.Sprintf("10.%d.%d.0 0.0.0.255", g.rng.IntN(4), genVlans[g.rng.IntN(len(genVlans))])
	}
	dst := "host " + g.pick(g.hosts)
	if g.rng.IntN(4) == 0 {
		dst = fmt.Sprintf("10.%d.%d.0 0.0.%d.255", 10+g.rng.IntN(4), g.rng.IntN(256)&^3, []int{0, 1, 3}[g.rng.IntN(3)])
	}
	switch proto {
	case "tcp", "udp":
		if g.rng.IntN(5) == 0 {
			p := genPorts[g.rng.IntN(len(genPorts))]
			return fmt.Sprintf(" %s %s %s %s range %d %d", action, proto, src, dst, p, p+1+g.rng.IntN(20))
		}
		return fmt.Sprintf(" %s %s %s %s eq %d", action, proto, src, dst, genPorts[g.rng.IntN(len(genPorts))])
	case "icmp":
		return fmt.Sprintf(" %s icmp %s %s %s", action, src, dst, []string{"echo", "echo-reply", "unreachable", "time-exceeded"}[g.rng.IntN(4)])
	default:
		if action == "deny" {
			return fmt.Sprintf(" deny   ip %s %s log", src, dst)
		}
		return fmt.Sprintf(" permit ip %s %s", src, dst)
	}
}

func (g *configGen) routeText() string {
	g.seq++
	return fmt.Sprintf("ip route 10.%d.%d.0 255.255.%d.0 10.%d.0.%d name %s-%s-%d", 20+g.rng.IntN(40), g.rng.IntN(256), []int{255, 254, 252, 240}[g.rng.IntN(4)],
		g.rng.IntN(4), 1+g.rng.IntN(6), []string{"CUST", "SITE", "VPN", "DC"}[g.rng.IntN(4)], g.pick(genRooms), g.seq)
}

func (g *configGen) prefixText() string {
	return fmt.Sprintf("ip prefix-list PL-%s seq %d permit 10.%d.%d.0/%d le 32", []string{"CUSTOMERS", "SITES", "DEFAULT-ONLY", "DC-AGG"}[g.rng.IntN(4)],
		5*(1+g.rng.IntN(400)), 20+g.rng.IntN(40), g.rng.IntN(256), []int{16, 20, 22, 24}[g.rng.IntN(4)])
}

// textOf writes a new line of the kind.
func (g *configGen) textOf(k genKind) string {
	switch k {
	case kindDesc:
		return g.descText()
	case kindAccess:
		return g.accessText()
	case kindVlanName:
		return g.vlanNameText()
	case kindACL:
		return g.aclText()
	case kindRoute:
		return g.routeText()
	case kindPrefix:
		return g.prefixText()
	}
	panic(fmt.Sprintf("no text for kind %d", k))
}

func (g *configGen) stamps() [2]string {
	at := g.night.Add(time.Duration(g.rng.IntN(3600)) * time.Second)
	ts := at.Format("15:04:05 MST Mon Jan 2 2006")
	return [2]string{
		"! Last configuration change at " + ts + " by " + []string{"netops", "jdoe", "automation", "mchen"}[g.rng.IntN(4)],
		"! NVRAM config last updated at " + ts + " by netops",
	}
}

// build writes version 1.
func (g *configGen) build() {
	st := g.stamps()
	g.addf(kindFixed, "Building configuration...")
	g.addf(kindFixed, "")
	g.addf(kindFixed, "Current configuration : 61440 bytes")
	g.add(kindStamp, st[0])
	g.add(kindStamp, st[1])
	g.addf(kindFixed, "!")
	g.addf(kindFixed, "version 17.9")
	for _, l := range []string{"service timestamps debug datetime msec localtime show-timezone", "service timestamps log datetime msec localtime show-timezone",
		"service password-encryption", "service call-home", "no platform punt-keepalive disable-kernel-core", "!"} {
		g.add(kindFixed, l)
	}
	g.addf(kindFixed, "hostname %s", g.host)
	for _, l := range []string{"!", "vrf definition Mgmt-vrf", " !", " address-family ipv4", " exit-address-family", " !", " address-family ipv6", " exit-address-family", "!",
		"logging buffered 64000 informational", "logging console warnings", "no logging monitor", "enable secret 9 $9$" + g.hex(7) + "$" + g.hex(21), "!",
		"aaa new-model", "!", "aaa group server tacacs+ TACACS-GROUP", " server name TACACS-1", " server name TACACS-2", " ip vrf forwarding Mgmt-vrf",
		" ip tacacs source-interface GigabitEthernet0/0", "!", "aaa authentication login default group TACACS-GROUP local", "aaa authentication enable default group TACACS-GROUP enable",
		"aaa authorization console", "aaa authorization exec default group TACACS-GROUP local if-authenticated", "aaa authorization commands 15 default group TACACS-GROUP local if-authenticated",
		"aaa accounting exec default start-stop group TACACS-GROUP", "aaa accounting commands 15 default start-stop group TACACS-GROUP", "!", "aaa session-id common",
		"clock timezone UTC 0 0", "switch 1 provision c9300-48p", "switch 2 provision c9300-48p", "!", "ip routing", "!", "ip name-server vrf Mgmt-vrf 10.0.0.53 10.0.1.53",
		"ip domain lookup source-interface Vlan100", "ip domain name corp.example.net", "!", "ip dhcp snooping vlan 100-150", "ip dhcp snooping", "login on-success log", "!"} {
		g.add(kindFixed, l)
	}
	// A trustpoint and its certificate: hex that hardly compresses.
	g.addf(kindFixed, "crypto pki trustpoint TP-self-signed-%d", 1000000000+g.rng.IntN(999999999))
	g.addf(kindFixed, " enrollment selfsigned")
	g.addf(kindFixed, " subject-name cn=IOS-Self-Signed-Certificate")
	g.addf(kindFixed, " revocation-check none")
	g.addf(kindFixed, " rsakeypair TP-self-signed")
	g.addf(kindFixed, "!")
	g.addf(kindFixed, "crypto pki certificate chain TP-self-signed")
	g.addf(kindFixed, " certificate self-signed 01")
	for range 24 {
		var b strings.Builder
		b.WriteString(" ")
		for i := range 8 {
			if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(g.hex(8))
		}
		g.add(kindFixed, strings.ToUpper(b.String()))
	}
	g.addf(kindFixed, "  \tquit")
	g.addf(kindFixed, "!")
	g.addf(kindFixed, "license boot level network-advantage addon dna-advantage")
	g.addf(kindFixed, "!")
	for _, u := range []string{"netops", "admin", "automation", "backup"} {
		g.addf(kindFixed, "username %s privilege 15 secret 9 $9$%s$%s", u, g.hex(7), g.hex(21))
	}
	for _, l := range []string{"!", "redundancy", " mode sso", "!", "transceiver type all", " monitoring", "!", "spanning-tree mode rapid-pvst", "spanning-tree extend system-id",
		"spanning-tree vlan 1-4094 priority 24576", "!", "lldp run", "!"} {
		g.add(kindFixed, l)
	}
	for _, v := range genVlans {
		g.addf(kindFixed, "vlan %d", v)
		g.add(kindVlanName, g.vlanNameText())
		g.addf(kindFixed, "!")
	}
	// Two stacked 48-port switches of access ports, uplinks, port
	// channels, SVIs.
	g.addf(kindFixed, "interface GigabitEthernet0/0")
	g.addf(kindFixed, " vrf forwarding Mgmt-vrf")
	g.addf(kindFixed, " ip address 10.255.0.%d 255.255.255.0", 1+g.rng.IntN(254))
	g.addf(kindFixed, " negotiation auto")
	g.addf(kindFixed, "!")
	for sw := 1; sw <= 2; sw++ {
		for p := 1; p <= 48; p++ {
			g.addf(kindFixed, "interface GigabitEthernet%d/0/%d", sw, p)
			if g.rng.IntN(10) == 0 {
				g.addf(kindFixed, " shutdown")
				g.addf(kindFixed, "!")
				continue
			}
			g.add(kindDesc, g.descText())
			g.add(kindAccess, g.accessText())
			g.addf(kindFixed, " switchport mode access")
			if g.rng.IntN(2) == 0 {
				g.addf(kindFixed, " switchport voice vlan 200")
			}
			if g.rng.IntN(2) == 0 { // 802.1X on half the user ports
				for _, l := range []string{" authentication periodic", " access-session port-control auto", " mab", " dot1x pae authenticator"} {
					g.add(kindFixed, l)
				}
			}
			g.addf(kindFixed, " switchport port-security maximum 3")
			g.addf(kindFixed, " switchport port-security")
			g.addf(kindFixed, " device-tracking attach-policy IPDT_POLICY")
			g.addf(kindFixed, " spanning-tree portfast")
			g.addf(kindFixed, " spanning-tree bpduguard enable")
			g.addf(kindFixed, " ip dhcp snooping limit rate 15")
			g.addf(kindFixed, "!")
		}
		for p := 1; p <= 8; p++ {
			g.addf(kindFixed, "interface TenGigabitEthernet%d/1/%d", sw, p)
			g.add(kindDesc, g.descText())
			g.addf(kindFixed, " switchport trunk allowed vlan 10,20,30,40,100-150,200-220,300-310,400-999")
			g.addf(kindFixed, " switchport mode trunk")
			g.addf(kindFixed, " ip dhcp snooping trust")
			g.addf(kindFixed, " channel-group %d mode active", 1+(p-1)/2)
			g.addf(kindFixed, "!")
		}
	}
	for pc := 1; pc <= 4; pc++ {
		g.addf(kindFixed, "interface Port-channel%d", pc)
		g.add(kindDesc, g.descText())
		g.addf(kindFixed, " switchport trunk allowed vlan 10,20,30,40,100-150,200-220,300-310,400-999")
		g.addf(kindFixed, " switchport mode trunk")
		g.addf(kindFixed, " ip dhcp snooping trust")
		g.addf(kindFixed, "!")
	}
	for i, v := range genVlans {
		g.addf(kindFixed, "interface Vlan%d", v)
		g.add(kindDesc, g.descText())
		g.addf(kindFixed, " ip address 10.%d.%d.1 255.255.255.0", i/8, v%256)
		g.addf(kindFixed, " ip helper-address 10.0.0.67")
		g.addf(kindFixed, " ip helper-address 10.0.1.67")
		g.addf(kindFixed, " no ip redirects")
		g.addf(kindFixed, " no ip proxy-arp")
		g.addf(kindFixed, " standby version 2")
		g.addf(kindFixed, " standby %d ip 10.%d.%d.254", v, i/8, v%256)
		g.addf(kindFixed, " standby %d priority 110", v)
		g.addf(kindFixed, " standby %d preempt", v)
		g.addf(kindFixed, "!")
	}
	g.addf(kindFixed, "router ospf 1")
	g.addf(kindFixed, " router-id 10.255.255.%d", 1+g.rng.IntN(254))
	g.addf(kindFixed, " passive-interface default")
	g.addf(kindFixed, " no passive-interface Port-channel1")
	g.addf(kindFixed, " no passive-interface Port-channel2")
	g.addf(kindFixed, " network 10.0.0.0 0.255.255.255 area 0")
	g.addf(kindFixed, "!")
	g.addf(kindFixed, "router bgp 650%02d", g.rng.IntN(100))
	g.addf(kindFixed, " bgp log-neighbor-changes")
	for n := range 12 {
		peer := g.ip(200 + n%4)
		g.addf(kindFixed, " neighbor %s remote-as 65%03d", peer, 100+n)
		g.addf(kindFixed, " neighbor %s description %s-PEER-%d", peer, g.pick(genNames), n)
		g.addf(kindFixed, " neighbor %s prefix-list PL-CUSTOMERS in", peer)
	}
	g.addf(kindFixed, "!")
	g.addf(kindFixed, "ip forward-protocol nd")
	g.addf(kindFixed, "ip http server")
	g.addf(kindFixed, "ip http secure-server")
	g.addf(kindFixed, "ip ssh version 2")
	g.addf(kindFixed, "ip ssh source-interface Vlan100")
	g.addf(kindFixed, "!")
	for range 45 {
		g.add(kindRoute, g.routeText())
	}
	g.addf(kindFixed, "!")
	for range 30 {
		g.add(kindPrefix, g.prefixText())
	}
	g.addf(kindFixed, "!")
	// ACLs fill the configuration up to its target size.
	acls := []string{"ACL-USERS-IN", "ACL-SERVERS-IN", "ACL-DMZ-IN", "ACL-GUEST-IN", "ACL-MGMT-IN", "ACL-IOT-IN"}
	tail := g.tailLines()
	tailSize := 0
	for _, l := range tail {
		tailSize += len(l) + 1
	}
	perACL := max(5, (g.target-g.size-tailSize-200)/len(acls)/55)
	for _, name := range acls {
		g.addf(kindFixed, "ip access-list extended %s", name)
		for range perACL {
			g.add(kindACL, g.aclText())
		}
		g.addf(kindFixed, " deny   ip any any log")
		g.addf(kindFixed, "!")
	}
	for g.size+tailSize < g.target {
		i := len(g.lines) - 2 // before the last ACL's closing lines
		g.lines = slices.Insert(g.lines, i, genLine{text: g.aclText(), kind: kindACL})
		g.size += len(g.lines[i].text) + 1
	}
	for _, l := range tail {
		g.add(kindFixed, l)
	}
	g.refreshSize()
}

func (g *configGen) tailLines() []string {
	out := []string{"logging source-interface Vlan100", "logging host 10.0.0.514", "logging host 10.0.1.514", "!",
		"snmp-server group NETOPS v3 priv read V3READ", "snmp-server view V3READ iso included",
		"snmp-server location " + g.pick(genRooms) + " rack " + fmt.Sprint(1+g.rng.IntN(40)), "snmp-server contact netops@example.net",
		"snmp-server enable traps snmp authentication linkdown linkup coldstart warmstart", "snmp-server enable traps config",
		"snmp-server host 10.0.0.162 version 3 priv netops-snmp", "!",
		"tacacs server TACACS-1", " address ipv4 10.0.0.49", " key 7 " + g.hex(20), "tacacs server TACACS-2", " address ipv4 10.0.1.49", " key 7 " + g.hex(20), "!",
		"control-plane", " service-policy input system-cpp-policy", "!",
		"banner motd ^C",
		"*************************************************************************",
		"*  " + g.host + strings.Repeat(" ", max(1, 69-len(g.host))) + "*",
		"*  This system is the property of Example Corp. Unauthorised access is   *",
		"*  prohibited and will be prosecuted. All sessions are logged and may be *",
		"*  monitored. Disconnect now if you are not an authorised user.          *",
		"*************************************************************************",
		"^C", "!",
		"line con 0", " exec-timeout 15 0", " logging synchronous", " stopbits 1",
		"line vty 0 4", " access-class ACL-MGMT-IN in vrf-also", " exec-timeout 15 0", " logging synchronous", " transport input ssh",
		"line vty 5 15", " access-class ACL-MGMT-IN in vrf-also", " exec-timeout 15 0", " transport input ssh", "!",
		"ntp server vrf Mgmt-vrf 10.0.0.123 prefer", "ntp server vrf Mgmt-vrf 10.0.1.123", "!", "end"}
	return out
}

func (g *configGen) hex(n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[g.rng.IntN(16)]
	}
	return string(b)
}

// refreshSize rewrites "Current configuration : N bytes" to the size.
func (g *configGen) refreshSize() {
	old := len(g.lines[2].text)
	g.lines[2].text = fmt.Sprintf("Current configuration : %d bytes", g.size)
	g.size += len(g.lines[2].text) - old
}

// Text is the current version, as the device would print it.
func (g *configGen) Text() string {
	var b strings.Builder
	b.Grow(g.size)
	for _, l := range g.lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}

// Lines is how many lines the current version has.
func (g *configGen) Lines() int { return len(g.lines) }

// Next moves to the next night's version: about 2% of the lines change,
// counting the two stamp lines and the size line IOS rewrites on every
// change; of the rest about half are edits of a line in place, a quarter
// inserts and a quarter deletes (inserts and deletes trade places when
// the size wanders more than 5% from the target). It returns how many
// lines it changed.
func (g *configGen) Next() int {
	g.night = g.night.Add(24 * time.Hour)
	g.versions++
	st := g.stamps()
	g.setLine(3, st[0])
	g.setLine(4, st[1])
	changes := int(genChangeFraction*float64(len(g.lines)) + 0.5)
	done := 3
	for done < changes {
		r := g.rng.IntN(4)
		op := "edit"
		switch {
		case r == 2:
			op = "insert"
		case r == 3:
			op = "delete"
		}
		if op == "insert" && g.size > g.target*105/100 {
			op = "delete"
		} else if op == "delete" && g.size < g.target*95/100 {
			op = "insert"
		}
		i, ok := g.randomLine(op)
		if !ok {
			continue
		}
		switch op {
		case "edit":
			text := g.textOf(g.lines[i].kind)
			for try := 0; try < 10 && text == g.lines[i].text; try++ {
				text = g.textOf(g.lines[i].kind)
			}
			g.setLine(i, text)
		case "insert":
			l := genLine{text: g.textOf(g.lines[i].kind), kind: g.lines[i].kind}
			g.lines = slices.Insert(g.lines, i+1, l)
			g.size += len(l.text) + 1
		case "delete":
			g.size -= len(g.lines[i].text) + 1
			g.lines = slices.Delete(g.lines, i, i+1)
		}
		done++
	}
	g.refreshSize()
	return done
}

func (g *configGen) setLine(i int, text string) {
	g.size += len(text) - len(g.lines[i].text)
	g.lines[i].text = text
}

// randomLine picks a line the operation may touch: any changeable line
// for an edit, an ACL entry, route or prefix-list entry for an insert
// (after it, same kind) or a delete.
func (g *configGen) randomLine(op string) (int, bool) {
	for range 1000 {
		i := g.rng.IntN(len(g.lines))
		switch k := g.lines[i].kind; {
		case k == kindFixed || k == kindStamp:
		case op == "edit":
			return i, true
		case k == kindACL || k == kindRoute || k == kindPrefix:
			return i, true
		}
	}
	return 0, false
}

// changedLines counts the lines a line diff from a to b touches: per
// run of changes, the larger of the lines removed and the lines added
// (an edit in place is one line, an insert or a delete one).
func changedLines(a, b string) int {
	n := 0
	for _, e := range udiff.Lines(a, b) {
		n += max(strings.Count(a[e.Start:e.End], "\n"), strings.Count(e.New, "\n"))
	}
	return n
}

func TestConfigGenIsDeterministic(t *testing.T) {
	a, b, c := newConfigGen(7, 60<<10), newConfigGen(7, 60<<10), newConfigGen(8, 60<<10)
	for v := range 20 {
		ta, tb := a.Text(), b.Text()
		if ta != tb {
			t.Fatalf("version %d differs between two generators with seed 7", v+1)
		}
		if ta == c.Text() {
			t.Fatalf("version %d is the same with seeds 7 and 8", v+1)
		}
		a.Next()
		b.Next()
		c.Next()
	}
}

// A year of versions stays about 60 KB, compresses like a real
// configuration (6-10x with zstd, as the store compresses) and each
// night changes about 2% of the lines: never none, never the same text.
func TestConfigGenYear(t *testing.T) {
	const target = 60 << 10
	g := newConfigGen(1, target)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	prev := g.Text()
	seen := map[string]bool{prev: true}
	var changedTotal, linesTotal int
	edits := map[string]int{}
	for v := 2; v <= 365; v++ {
		lines := g.Lines()
		g.Next()
		text := g.Text()
		if n := len(text); n < target*90/100 || n > target*110/100 {
			t.Fatalf("version %d is %d bytes, want within 10%% of %d", v, n, target)
		}
		if want := fmt.Sprintf("Current configuration : %d bytes\n", len(text)); !strings.Contains(text, want) {
			t.Fatalf("version %d: size line is not %q", v, want)
		}
		if seen[text] {
			t.Fatalf("version %d repeats an earlier version", v)
		}
		seen[text] = true
		changed := changedLines(prev, text)
		if changed < lines*1/100 || changed > lines*3/100 {
			t.Fatalf("version %d changes %d of %d lines, want about 2%%", v, changed, lines)
		}
		changedTotal += changed
		linesTotal += lines
		removed, added := lineDelta(prev, text)
		edits["removed"] += removed
		edits["added"] += added
		if v%73 == 0 {
			ratio := float64(len(text)) / float64(len(enc.EncodeAll([]byte(text), nil)))
			if ratio < 6 || ratio > 10 {
				t.Fatalf("version %d compresses %.1fx with zstd, want 6-10x like a real configuration", v, ratio)
			}
			t.Logf("version %d: %d bytes, %d lines, zstd %.1fx", v, len(text), g.Lines(), ratio)
		}
		prev = text
	}
	share := float64(changedTotal) / float64(linesTotal)
	if share < 0.017 || share > 0.023 {
		t.Fatalf("a night changes %.2f%% of the lines on average, want 2%%", 100*share)
	}
	// Inserts and deletes both happen, not only edits in place.
	if edits["added"] == edits["removed"] {
		t.Fatalf("lines added %d = lines removed %d: no inserts or deletes?", edits["added"], edits["removed"])
	}
	t.Logf("average change %.2f%% of lines; %d lines added, %d removed in a year", 100*share, edits["added"], edits["removed"])
}

// lineDelta counts lines only in b (added) and only in a (removed), as
// multisets.
func lineDelta(a, b string) (removed, added int) {
	count := map[string]int{}
	for l := range strings.Lines(a) {
		count[l]++
	}
	for l := range strings.Lines(b) {
		count[l]--
	}
	for _, n := range count {
		if n > 0 {
			removed += n
		} else {
			added -= n
		}
	}
	return removed, added
}
