package restore_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/restore"
	"backupd/db"
)

// asr920Tail is the end of a real "show running-config" of an ASR 920
// on IOS-XE 16.8.1b, as recorded in oxidized (github.com/ytti/oxidized,
// spec/model/data/ios#asr920_16.8.1b#output.txt, lines 477-493): a
// "banner motd" whose text has lines indented by a space, which a merge
// by indentation would take for a submode.
const asr920Tail = `control-plane
!
banner motd ^C
*******************************************************************************
 4.  The information contained in this computer network is confidential and
     must not be disclosed to unauthorised persons. Unauthorised disclosure,
     system disruption or any unauthorised modification may lead to prosecution.
 5.  Details of all transactions and accesses including user-ids, are
     automatically recorded by the computer network and can be retrieved for
     audit purposes. By accessing and using this computer network you are
     consenting to security monitoring.
********************************************************************************
^C
!
line con 0
 exec-timeout 20 0
 logging synchronous
`

// c9200Banners are two banners of a C9200L on 17.9.4a, from the same
// recordings (spec/model/data/ios#C9200L-24P-4G_17.09.04a#simulation.yaml),
// and one of a C9800 on 17.6.5 whose text starts on the banner's own
// line (ios#C9800-L-F-K9_17.06.05#simulation.yaml), joined here with a "!".
const c9200Banners = `banner exec ^C
### EXAMPLE IOS-XE 17.09.04a config on a C9200L-24P-4G ###
Retrieved 2024-09-09 by @robertcheramy
### ###
^C
banner login ^C
.
Login banner.
.
^C
!
banner login ^CThis is an actively monitored system!
Unauthorized access prohibited!
^C
hostname sw1
`

// certChain is a self-signed certificate as IOS shows it (the layout of
// "crypto pki certificate chain": the certificate line, its hexadecimal
// lines, "quit"), its hexadecimal shortened; then a pubkey chain's
// key-string, a switch macro and NX-OS banners with their own
// delimiter, one on one line.
const certChain = `crypto pki certificate chain TP-self-signed-7988608
 certificate self-signed 01
  30820239 308201A2 A0030201 02020101 300D0609 2A864886 F70D0101 04050030
  6CCD03B3 871D45FB 15152FA5 CFF48ECF 82650FBC CEE8A066 4878C210 32
  	quit
 certificate ca 01 nvram:CiscoLicensi#1CA.cer
crypto key pubkey-chain rsa
 named-key peer1
  key-string
   305C300D 06092A86 4886F70D 01010105 00034B00 30480241 00C5E23B
  quit
macro name uplink
 switchport mode trunk
@
banner motd #Authorised access only.
Disconnect now if you are not.#
banner exec %Hello%
interface Ethernet1/1
  description uplink
`

func TestMergeBlocks(t *testing.T) {
	ios, _ := driver.Lookup("cisco_ios")
	nxos, _ := driver.Lookup("cisco_nxos")
	for _, c := range []struct {
		name string
		p    driver.Platform
		text string
		want string
	}{
		{"asr920 motd", ios, asr920Tail, "banner 3-13"},
		{"c9200 and c9800", ios, c9200Banners, "banner 1-5, banner 6-10, banner 12-14"},
		{"certificates, key, macro, nx-os", nxos, certChain,
			"certificate 2-5, certificate 6-6, key 9-11, macro 12-14, banner 15-16, banner 17-17"},
	} {
		var got []string
		for _, b := range restore.Blocks(c.p, c.text) {
			got = append(got, fmt.Sprintf("%s %d-%d", b.Kind, b.From, b.To))
		}
		if strings.Join(got, ", ") != c.want {
			t.Errorf("%s: blocks %q, want %q", c.name, strings.Join(got, ", "), c.want)
		}
	}

	// A line inside the banner is refused, naming the banner's lines
	// and why; so is a range over it, as the command line sends one.
	for _, sel := range [][]int{{5}, {3}, {13}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}} {
		_, err := restore.Selection(ios, asr920Tail, sel)
		var bad *db.ErrInvalidField
		if !errors.As(err, &bad) || !strings.Contains(bad.Message,
			"lines 3-13 are a banner: a banner spans several lines and cannot be merged line by line; set it by hand") {
			t.Errorf("selection %v: %v", sel, err)
		}
	}
	_, err := restore.Selection(nxos, certChain, []int{3, 10, 17})
	if err == nil || !strings.Contains(err.Error(), `lines 2-5 are a certificate: a certificate's hexadecimal lines end with "quit"`) ||
		!strings.Contains(err.Error(), "lines 9-11 are a key") || !strings.Contains(err.Error(), "line 17 is a banner") {
		t.Errorf("selection in three blocks: %v", err)
	}
	// Lines around the banner stay selectable; the banner is never a
	// parent, and the line after it is placed under its own parent.
	sel, err := restore.Selection(ios, asr920Tail, []int{1, 16})
	if err != nil {
		t.Fatal(err)
	}
	plan := restore.PlanText(restore.MergePlan(ios, asr920Tail, sel))
	if plan != "control-plane\nline con 0\n exec-timeout 20 0\n" {
		t.Errorf("plan %q", plan)
	}
	// "Select all" leaves the blocks out.
	all := fmt.Sprint(restore.AllLines(ios, asr920Tail))
	if all != "[1 15 16 17]" {
		t.Errorf("all lines %s", all)
	}
	all = fmt.Sprint(restore.AllLines(nxos, certChain))
	if all != "[1 7 8 18 19]" {
		t.Errorf("all lines (certificates) %s", all)
	}
}

// NX-OS's "version …" line names the release, not configuration: a
// merge leaves it out like the comments, where classic IOS keeps its
// own. The head is that of a real N5548 on 7.3(13) (oxidized,
// spec/model/data/nxos#N5548_7.3.13#simulation.yaml).
func TestMergeNXOSVersionLine(t *testing.T) {
	nxos, _ := driver.Lookup("cisco_nxos")
	ios, _ := driver.Lookup("cisco_ios")
	text := "\n!Command: show running-config\n!Time: Sat Mar 28 20:40:06 2026\n\nversion 7.3(13)N1(1)\nhostname TEST-12345\n\n" +
		"no feature telnet\nfeature interface-vlan\n"
	if got := fmt.Sprint(restore.AllLines(nxos, text)); got != "[6 8 9]" {
		t.Errorf("all lines %s", got)
	}
	if restore.Sendable(nxos, "version 10.4(5) Bios:version 01.11 ") {
		t.Error("NX-OS's version line is sendable")
	}
	if _, err := restore.Selection(nxos, text, []int{2, 5}); err == nil {
		t.Error("a selection of the version line and a comment was taken")
	}
	if !restore.Sendable(ios, "version 15.7") {
		t.Error("classic IOS's version line is not sendable")
	}
}
