package restore_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"backupd/app/collect/driver"
	"backupd/app/devsim"
	"backupd/app/restore"
	"backupd/db"
)

// lineOf is the number (from 1) of the first line of text that is want.
func lineOf(t *testing.T, text, want string) int {
	t.Helper()
	for i, l := range strings.Split(text, "\n") {
		if l == want {
			return i + 1
		}
	}
	t.Fatalf("the version has no line %q", want)
	return 0
}

// mergeTo requests a merge of lines of version, previews, approves and
// waits for its end.
func (e *env) mergeTo(version db.Backup, lines []int) db.Restore {
	e.t.Helper()
	ctx := context.Background()
	r, err := e.svc.Request(ctx, e.admin, e.device, version.ID, "", lines)
	if err != nil {
		e.t.Fatal(err)
	}
	r = e.until(r.ID, db.RestorePending)
	if _, err := e.svc.Approve(ctx, e.admin, r.ID, *r.PreviewHash, ""); err != nil {
		e.t.Fatal(err)
	}
	return e.until(r.ID, db.RestoreSucceeded, db.RestoreFailed, db.RestoreRolledBack, db.RestoreRollbackFailed)
}

// iosChanged changes a classic IOS device by hand (hostname, one
// interface's description, the SNMP location) and returns the version
// before, its text, and the lines changed.
func iosChanged(e *env, d *devsim.Device) (db.Backup, string, [3]string) {
	e.t.Helper()
	version := e.backup()
	text := e.text(*version.SnapshotHash)
	var desc, loc string
	for _, l := range strings.Split(text, "\n") {
		if desc == "" && strings.HasPrefix(l, " description ") {
			desc = l
		}
		if strings.HasPrefix(l, "snmp-server location ") {
			loc = l
		}
	}
	if desc == "" || loc == "" {
		e.t.Fatalf("the version has no description or location:\n%s", text)
	}
	conf := d.RunningConfig()
	conf = strings.Replace(conf, "hostname lab-cisco-ios\n", "hostname lab-renamed\n", 1)
	conf = strings.Replace(conf, desc+"\n", " description changed-by-hand\n", 1)
	conf = strings.Replace(conf, loc+"\n", "snmp-server location moved-by-hand\n", 1)
	d.SetRunningConfig(conf)
	if !e.backup().Changed {
		e.t.Fatal("the change by hand was not seen")
	}
	return version, text, [3]string{desc, loc, "hostname lab-cisco-ios"}
}

// The selected lines of yesterday's version go back on a classic IOS
// router, the description after its interface line, and are saved; the
// line not selected (the hostname) stays as changed by hand.
func TestRestoreMergeSelectedLinesIOS(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("cisco_ios", devsim.Options{})
	version, text, lines := iosChanged(e, d)
	descN, locN := lineOf(t, text, lines[0]), lineOf(t, text, lines[1])
	// Blank lines and comments in a selection are left out.
	r := e.mergeTo(version, []int{locN, descN, lineOf(t, text, "!")})
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if len(r.Lines) != 2 || r.Lines[0] != descN || r.Lines[1] != locN {
		t.Errorf("stored lines %v, want [%d %d]", r.Lines, descN, locN)
	}
	run := d.RunningConfig()
	iface := strings.Split(text, "\n")[descN-2]
	if !strings.Contains(run, iface+"\n"+lines[0]+"\n") || strings.Contains(run, "changed-by-hand") {
		t.Errorf("the description is not back under %q:\n%s", iface, run)
	}
	if !strings.Contains(run, lines[1]+"\n") || strings.Contains(run, "moved-by-hand") {
		t.Errorf("the location is not back:\n%s", run)
	}
	if !strings.Contains(run, "hostname lab-renamed\n") {
		t.Error("a line not selected (the hostname) was changed")
	}
	if d.StartupConfig() != run {
		t.Error("the merge was not saved")
	}
	if !strings.Contains(deref(r.Outcome), `"sent":3`) || !strings.Contains(deref(r.Outcome), `"verified":true`) {
		t.Errorf("outcome %s", deref(r.Outcome))
	}
}

// The device refuses the second line: the first stays in, nothing is
// saved or rolled back, and the restore fails saying so with the
// device's answer.
func TestRestoreMergeRefusedLineIOS(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("cisco_ios", devsim.Options{RejectLines: regexp.MustCompile(`^snmp-server location DC`)})
	version, text, lines := iosChanged(e, d)
	saved := d.StartupConfig()
	r := e.mergeTo(version, []int{lineOf(t, text, lines[0]), lineOf(t, text, lines[1])})
	if r.State != db.RestoreFailed || deref(r.ErrorReason) != restore.ReasonRefused {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	msg := deref(r.Error)
	for _, want := range []string{"% Invalid input detected at '^' marker.", "partially applied: the 2 lines before it were sent (of 3)",
		"nothing was rolled back", "not saved", lines[1]} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q: %s", want, msg)
		}
	}
	run := d.RunningConfig()
	if !strings.Contains(run, lines[0]+"\n") || !strings.Contains(run, "moved-by-hand") {
		t.Errorf("the running configuration is not the partial merge:\n%s", run)
	}
	if d.StartupConfig() != saved {
		t.Error("a refused merge was saved")
	}
	if r.PostBackupID == nil {
		t.Error("no backup after the refused merge")
	}
}

// The session drops after the first line: failed, state unknown, the
// backup after named.
func TestRestoreMergeSessionLostIOS(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("cisco_ios", devsim.Options{DisconnectAfter: regexp.MustCompile(`^description `)})
	version, text, lines := iosChanged(e, d)
	r := e.mergeTo(version, []int{lineOf(t, text, lines[0]), lineOf(t, text, lines[1])})
	if r.State != db.RestoreFailed || deref(r.ErrorReason) != restore.ReasonLost ||
		!strings.Contains(deref(r.Error), "state is not known") || !strings.Contains(deref(r.Error), "nothing was rolled back") {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
}

// Parents by indentation, each sent once, before the first selected
// line under them; comments and blank lines never sent.
func TestMergePlanParents(t *testing.T) {
	p, _ := driver.Lookup("cisco_ios")
	text := strings.Join([]string{
		"Building configuration...",           // 1
		"!",                                   // 2
		"hostname r1",                         // 3
		"interface Gi0/1",                     // 4
		" description uplink",                 // 5
		" ip address 10.0.0.1 255.255.255.0",  // 6
		"!",                                   // 7
		"router bgp 65001",                    // 8
		" neighbor 192.0.2.1 remote-as 65002", // 9
		" address-family ipv4",                // 10
		"  network 10.0.0.0",                  // 11
		"  neighbor 192.0.2.1 activate",       // 12
		" exit-address-family",                // 13
		"",                                    // 14
		"interface Gi0/2",                     // 15
		" shutdown",                           // 16
		"end",                                 // 17
	}, "\n") + "\n"
	sel, err := restore.Selection(p, text, []int{12, 5, 6, 11, 2, 14, 17, 15, 16, 5, 3})
	if err != nil {
		t.Fatal(err)
	}
	plan := restore.MergePlan(p, text, sel)
	var got []string
	for _, l := range plan {
		s := l.Text
		if l.Parent {
			s = "P:" + s
		}
		got = append(got, s)
	}
	want := []string{"hostname r1", "P:interface Gi0/1", " description uplink", " ip address 10.0.0.1 255.255.255.0",
		"P:router bgp 65001", "P: address-family ipv4", "  network 10.0.0.0", "  neighbor 192.0.2.1 activate",
		"interface Gi0/2", " shutdown"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("plan\n got %q\nwant %q", got, want)
	}
	// The plan is verified line by line under its parents: a device with
	// the network under another address family lacks it.
	have := strings.Replace(text, " address-family ipv4", " address-family ipv6", 1)
	if m := restore.MissingLines(p, have, restore.PlanText(plan)); len(m) != 3 || m[0] != "address-family ipv4" {
		t.Errorf("missing %q", m)
	}
	if m := restore.MissingLines(p, text+"hostname extra\n", restore.PlanText(plan)); len(m) != 0 {
		t.Errorf("lines the version lacks count: %q", m)
	}
	if _, err := restore.Selection(p, text, []int{2, 14}); err == nil {
		t.Error("a selection of comments and blank lines was taken")
	}
}

// Bad requests are refused with a sentence and record nothing: no
// selection on a merge platform, a line outside the version, a
// selection on a platform that replaces.
func TestRestoreMergeRequestRefusals(t *testing.T) {
	e := newEngineEnv(t)
	ctx := context.Background()
	e.sim("cisco_ios", devsim.Options{})
	v := e.backup()
	if _, err := e.svc.Request(ctx, e.admin, e.device, v.ID, "", nil); !errors.Is(err, restore.ErrNoSelection) {
		t.Errorf("no selection: %v", err)
	}
	var bad *db.ErrInvalidField
	if _, err := e.svc.Request(ctx, e.admin, e.device, v.ID, "", []int{1, 99999}); !errors.As(err, &bad) ||
		!strings.Contains(bad.Message, "line 99999 is not in the version") {
		t.Errorf("a line out of range: %v", err)
	}
	e.sim("cisco_xe", devsim.Options{})
	xe := e.backup()
	if _, err := e.svc.Request(ctx, e.admin, e.device, xe.ID, "", []int{3}); !errors.Is(err, restore.ErrSelectionNotMerge) {
		t.Errorf("a selection on a replace platform: %v", err)
	}
	if rs, _, err := e.store.ListRestores(ctx, db.RestoreFilter{}); err != nil || len(rs) != 0 {
		t.Errorf("refused requests recorded %d restores (%v)", len(rs), err)
	}
}

// nxosChanged changes a simulated NX-OS switch by hand (one interface's
// description, the NTP server) and returns the version before, its text,
// and the lines changed.
func nxosChanged(e *env, d *devsim.Device) (db.Backup, string, [2]string) {
	e.t.Helper()
	version := e.backup()
	text := e.text(*version.SnapshotHash)
	var desc, ntp string
	for _, l := range strings.Split(text, "\n") {
		if desc == "" && strings.HasPrefix(l, "  description ") {
			desc = l
		}
		if strings.HasPrefix(l, "ntp server ") {
			ntp = l
		}
	}
	if desc == "" || ntp == "" {
		e.t.Fatalf("the version has no description or NTP server:\n%s", text)
	}
	conf := d.RunningConfig()
	conf = strings.Replace(conf, desc+"\n", "  description changed-by-hand\n", 1)
	conf = strings.Replace(conf, ntp+"\n", "ntp server 198.51.100.9 use-vrf management\n", 1)
	d.SetRunningConfig(conf)
	if !e.backup().Changed {
		e.t.Fatal("the change by hand was not seen")
	}
	return version, text, [2]string{desc, ntp}
}

// The same on NX-OS: a description (under its interface, indented by
// two spaces as NX-OS shows it) goes back with its interface line, the
// NTP server line is added (NX-OS keeps several), the switch saves
// with "copy running-config startup-config", and the backup after
// verifies it.
func TestRestoreMergeSelectedLinesNXOS(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("cisco_nxos", devsim.Options{})
	version, text, lines := nxosChanged(e, d)
	descN, ntpN := lineOf(t, text, lines[0]), lineOf(t, text, lines[1])
	// "select all" would send the version line: left out like comments.
	r := e.mergeTo(version, []int{ntpN, descN, lineOf(t, text, "version 9.3(10) Bios:version 07.69")})
	if r.State != db.RestoreSucceeded {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	if len(r.Lines) != 2 || r.Lines[0] != ntpN || r.Lines[1] != descN {
		t.Errorf("stored lines %v, want [%d %d]", r.Lines, ntpN, descN)
	}
	run := d.RunningConfig()
	iface := strings.Split(text, "\n")[descN-2]
	if !strings.HasPrefix(iface, "interface Ethernet") || !strings.Contains(run, iface+"\n"+lines[0]+"\n") ||
		strings.Contains(run, "changed-by-hand") {
		t.Errorf("the description is not back under %q:\n%s", iface, run)
	}
	if !strings.Contains(run, lines[1]+"\n") {
		t.Errorf("the NTP server is not back:\n%s", run)
	}
	if d.StartupConfig() != run {
		t.Error("the merge was not saved")
	}
	if !strings.Contains(deref(r.Outcome), `"sent":3`) || !strings.Contains(deref(r.Outcome), `"verified":true`) {
		t.Errorf("outcome %s", deref(r.Outcome))
	}
}

// NX-OS refuses the description with its own words ("% Invalid
// command at '^' marker."): the NTP server (first in the version) and
// the interface line went in, nothing is saved, and the restore fails
// saying so.
func TestRestoreMergeRefusedLineNXOS(t *testing.T) {
	e := newEngineEnv(t)
	d := e.sim("cisco_nxos", devsim.Options{RejectLines: regexp.MustCompile(`^description `)})
	version, text, lines := nxosChanged(e, d)
	saved := d.StartupConfig()
	r := e.mergeTo(version, []int{lineOf(t, text, lines[0]), lineOf(t, text, lines[1])})
	if r.State != db.RestoreFailed || deref(r.ErrorReason) != restore.ReasonRefused {
		t.Fatalf("restore %s (%s): %s\n%s", r.State, deref(r.ErrorReason), deref(r.Error), e.log.String())
	}
	msg := deref(r.Error)
	for _, want := range []string{"% Invalid command at '^' marker.", "partially applied: the 2 lines before it were sent (of 3)",
		"nothing was rolled back", "not saved", strings.TrimSpace(lines[0])} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q: %s", want, msg)
		}
	}
	if run := d.RunningConfig(); !strings.Contains(run, "changed-by-hand") || !strings.Contains(run, lines[1]+"\n") {
		t.Errorf("the running configuration is not the partial merge:\n%s", run)
	}
	if d.StartupConfig() != saved {
		t.Errorf("a refused merge was saved:\n%s\n----\n%s", saved, d.StartupConfig())
	}
}
