package devsim

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	junosOp     = "admin@srx> "
	junosConfig = "admin@srx# "
)

// junosTarget is the device's configuration with a new host name and one
// statement more: the version a restore puts back.
func junosTarget(t *testing.T, d *Device) string {
	t.Helper()
	body := d.RunningConfig()
	target := strings.Replace(body, "    host-name srx;", "    host-name srx-restored;", 1)
	target = strings.Replace(target, "    ntp {\n", "    ntp {\n        boot-server 192.0.2.99;\n", 1)
	if target == body || !strings.Contains(target, "boot-server") {
		t.Fatal("target configuration did not change")
	}
	return target
}

func junosCLI(t *testing.T, d *Device) *cli {
	c := openCLI(t, d, junosOp)
	c.run("set cli screen-length 0", junosOp)
	return c
}

// loadTerminal types a configuration into load override terminal.
func (c *cli) loadTerminal(text, until string) string {
	c.t.Helper()
	c.run("load override terminal", "[Type ^D at a new line to end input]\r\n")
	send(c.t, c.w, text+"\x04")
	return c.e.must(c.t, until)
}

// The restore path: configure exclusive, load override from the
// terminal, compare, check, commit; the next backup (exec, as the
// collector takes it) is the new text behind a fresh header.
func TestJunosLoadOverrideCommit(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos", Seed: 5})
	before := d.RunningConfig()
	target := junosTarget(t, d)
	c := junosCLI(t, d)
	out := c.run("configure exclusive", junosConfig)
	if !strings.Contains(out, "warning: uncommitted changes will be discarded on exit\r\nEntering configuration mode\r\n\r\n[edit]\r\n") {
		t.Errorf("configure exclusive printed %q", out)
	}
	if out := c.loadTerminal(target, junosConfig); !strings.Contains(out, "^Dload complete\r\n") {
		t.Errorf("load printed %q", tail(out))
	}
	out = c.run("show | compare", junosConfig)
	for _, want := range []string{"[edit system]\r\n-  host-name srx;\r\n+  host-name srx-restored;\r\n", "[edit system ntp]\r\n+    boot-server 192.0.2.99;\r\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("show | compare lacks %q:\n%s", want, out)
		}
	}
	if d.RunningConfig() != before {
		t.Fatal("loading changed the active configuration")
	}
	if out := c.run("commit check", junosConfig); !strings.Contains(out, "configuration check succeeds") {
		t.Errorf("commit check printed %q", out)
	}
	if out := c.run("commit", junosConfig); !strings.Contains(out, "commit complete") {
		t.Errorf("commit printed %q", out)
	}
	if out := c.run("exit", junosOp); !strings.Contains(out, "Exiting configuration mode") || strings.Contains(out, "uncommitted") {
		t.Errorf("exit printed %q", out)
	}

	if d.RunningConfig() != target {
		t.Error("running configuration is not the loaded text")
	}
	shown := sshExec(t, d, "show configuration | display omit")
	header, body, _ := strings.Cut(shown, "\n")
	if !strings.HasPrefix(header, "## Last commit: ") || body != target {
		t.Errorf("backup after the commit: header %q, body equal %v", header, body == target)
	}
	if last := lastCommit(d); last.Kind != CommitCommit || last.Text != target || last.User != "admin" {
		t.Errorf("history ends with %+v", last)
	}

	// The same from a file, as after an SCP upload: back to the start.
	d.PutFile("/var/tmp/restore.conf", []byte(before))
	c.run("configure exclusive", junosConfig)
	if out := c.run("load override /var/tmp/restore.conf", junosConfig); !strings.Contains(out, "load complete") {
		t.Errorf("load from file printed %q", out)
	}
	if out := c.run("load override /var/tmp/missing.conf", junosConfig); !strings.Contains(out, "error: could not open configuration file") {
		t.Errorf("missing file: %q", out)
	}
	c.run("commit and-quit", junosOp)
	if d.RunningConfig() != before {
		t.Error("load override from a file did not restore the first text")
	}
}

// A line the device refuses: the errors of a load, then rollback 0 leaves
// the device as it was.
func TestJunosRejectedLine(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos", RejectLines: regexp.MustCompile(`^boot-server `)})
	before := d.RunningConfig()
	target := junosTarget(t, d)
	c := junosCLI(t, d)
	c.run("configure exclusive", junosConfig)
	out := c.loadTerminal(target, junosConfig)
	line := strings.Count(target[:strings.Index(target, "boot-server")], "\n") + 1
	want := "syntax error: boot-server\r\n  [edit system ntp]\r\n    'boot-server 192.0.2.99;'\r\n      syntax error\r\nload complete (1 errors)\r\n"
	if !strings.Contains(out, "^Dterminal:"+strconv.Itoa(line)+":(19) "+want) {
		t.Errorf("load with a refused line printed %q", tail(out))
	}
	if out := c.run("rollback 0", junosConfig); !strings.Contains(out, "load complete") {
		t.Errorf("rollback 0 printed %q", out)
	}
	if out := c.run("show | compare", junosConfig); changed(out) {
		t.Errorf("candidate still differs: %q", out)
	}
	c.run("exit", junosOp)
	if d.RunningConfig() != before || len(d.Commits()) != 1 {
		t.Errorf("device changed: %d versions", len(d.Commits()))
	}

	// Typed interactively, the refused statement gets the caret.
	c.run("configure", junosConfig)
	if out := c.run("set system ntp boot-server 192.0.2.99", junosConfig); !strings.Contains(out, "^\r\nsyntax error.") {
		t.Errorf("interactive set printed %q", out)
	}
}

// changed reports whether show | compare output lists a change.
func changed(out string) bool {
	for _, l := range strings.Split(out, "\r\n") {
		if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-") || strings.HasPrefix(l, "[edit ") {
			return true
		}
	}
	return false
}

// commit confirmed without a confirm: the device goes back on its own,
// says so to the open session, and records the rollback.
func TestJunosConfirmTimerRollsBack(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos", Minute: 400 * time.Millisecond})
	before := d.RunningConfig()
	target := junosTarget(t, d)
	c := junosCLI(t, d)
	c.run("configure exclusive", junosConfig)
	c.loadTerminal(target, junosConfig)
	out := c.run("commit confirmed 1", junosConfig)
	if !strings.Contains(out, "commit confirmed will be automatically rolled back in 1 minutes unless confirmed\r\ncommit complete\r\n\r\n# commit confirmed will be rolled back in 1 minutes\r\n[edit]\r\n") {
		t.Errorf("commit confirmed printed %q", out)
	}
	if d.RunningConfig() != target {
		t.Fatal("commit confirmed did not activate the configuration")
	}
	if _, pending := d.ConfirmPending(); !pending {
		t.Fatal("no confirm pending")
	}
	c.e.must(t, "Commit was not confirmed; automatic rollback complete.")
	waitFor(t, "rollback", wait, func() bool { return d.Rollbacks() == 1 })
	if d.RunningConfig() != before {
		t.Error("the device did not go back to its previous configuration")
	}
	h := d.Commits()
	if len(h) != 3 || h[1].Kind != CommitConfirmed || h[1].Text != target || h[2].Kind != CommitRollback || h[2].Text != before {
		t.Errorf("history: %v", kinds(h))
	}
	if _, pending := d.ConfirmPending(); pending {
		t.Error("confirm still pending after the rollback")
	}
	// The candidate follows the rolled back configuration.
	if out := c.run("show | compare", junosConfig); changed(out) {
		t.Errorf("candidate differs after the rollback: %q", out)
	}
}

func kinds(h []Commit) []CommitKind {
	out := make([]CommitKind, len(h))
	for i, c := range h {
		out[i] = c.Kind
	}
	return out
}

// The session is lost right after commit confirmed: nobody confirms, the
// timer rolls back, the next backup sees the old configuration.
func TestJunosSessionLostBeforeConfirm(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos", Minute: 100 * time.Millisecond, DisconnectAfter: regexp.MustCompile(`^commit confirmed`)})
	before := d.RunningConfig()
	target := junosTarget(t, d)
	c := junosCLI(t, d)
	c.run("configure exclusive", junosConfig)
	c.loadTerminal(target, junosConfig)
	send(t, c.w, "commit confirmed 5\n")
	c.e.must(t, "commit complete\r\n")
	if _, err := c.e.waitEnd(wait); err != nil {
		t.Fatalf("session not dropped: %v", err)
	}
	if d.RunningConfig() != target {
		t.Fatal("the commit did not take before the drop")
	}
	waitFor(t, "rollback", wait, func() bool { return d.Rollbacks() == 1 })
	if _, body, _ := strings.Cut(sshExec(t, d, "show configuration | display omit"), "\n"); body != before {
		t.Error("backup after the rollback is not the old configuration")
	}
	// The lock of the lost session is gone.
	c2 := junosCLI(t, d)
	if out := c2.run("configure exclusive", junosConfig); !strings.Contains(out, "Entering configuration mode") {
		t.Errorf("configure exclusive after the drop: %q", out)
	}
}

// A confirm in time keeps the change, by commit or by commit check.
func TestJunosConfirmInTime(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos", Minute: 100 * time.Millisecond})
	target := junosTarget(t, d)
	c := junosCLI(t, d)
	c.run("configure exclusive", junosConfig)
	c.loadTerminal(target, junosConfig)
	c.run("commit confirmed 5", junosConfig)
	deadline, pending := d.ConfirmPending()
	if !pending {
		t.Fatal("no confirm pending")
	}
	if out := c.run("commit", junosConfig); !strings.Contains(out, "commit complete") || strings.Contains(out, "rolled back in") {
		t.Errorf("confirming commit printed %q", out)
	}
	c.run("set system host-name srx-2", junosConfig)
	c.run("commit confirmed 5", junosConfig)
	if out := c.run("commit check", junosConfig); !strings.Contains(out, "configuration check succeeds") {
		t.Errorf("commit check printed %q", out)
	}
	if _, pending := d.ConfirmPending(); pending {
		t.Fatal("commit check did not confirm")
	}
	// Past both deadlines: nothing rolls back.
	time.Sleep(time.Until(deadline.Add(300 * time.Millisecond)))
	if d.Rollbacks() != 0 || !strings.Contains(d.RunningConfig(), "host-name srx-2;") {
		t.Errorf("confirmed change rolled back (%d rollbacks)", d.Rollbacks())
	}
	if ok, extra := c.e.quiet(10 * time.Millisecond); !ok && strings.Contains(extra, "Broadcast") {
		t.Errorf("broadcast after a confirmed commit: %q", extra)
	}
}

// configure exclusive locks out others; configure private cannot commit
// confirmed; leaving with changes asks first.
func TestJunosConfigureModes(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos"})
	before := d.RunningConfig()
	a, b := junosCLI(t, d), junosCLI(t, d)
	a.run("configure exclusive", junosConfig)
	if out := b.run("configure exclusive", junosOp); !strings.Contains(out, "error: configuration database locked by:\r\n  admin terminal pts/") {
		t.Errorf("second configure exclusive: %q", out)
	}
	if out := b.run("configure private", junosConfig); !strings.Contains(out, "warning: uncommitted changes will be discarded on exit") {
		t.Errorf("configure private: %q", out)
	}
	if out := b.run("commit confirmed 5", junosConfig); !strings.Contains(out, "error: commit confirmed not supported for private configuration") {
		t.Errorf("commit confirmed in private mode: %q", out)
	}
	b.run("exit", junosOp)

	a.run("set system host-name changed", junosConfig)
	if out := a.run("exit", "(yes) "); !strings.Contains(out, "The configuration has been changed but not committed\r\nDiscard uncommitted changes? [yes,no] (yes) ") {
		t.Errorf("exit with changes: %q", out)
	}
	a.run("no", junosConfig)
	a.run("exit configuration-mode", "(yes) ")
	if out := a.run("yes", junosOp); !strings.Contains(out, "Exiting configuration mode") {
		t.Errorf("exit: %q", out)
	}
	// The discarded change is gone for the next session too.
	b.run("configure", junosConfig)
	if out := b.run("show | compare", junosConfig); changed(out) {
		t.Errorf("discarded change still in the candidate: %q", out)
	}
	b.run("delete system host-name", junosConfig)
	if out := b.run("exit", "(yes) "); !strings.Contains(out, "Exit with uncommitted changes? [yes,no] (yes) ") {
		t.Errorf("shared exit: %q", out)
	}
	b.run("", junosOp)
	if d.RunningConfig() != before {
		t.Error("nothing was committed, yet the configuration changed")
	}
	if out := a.run("configure exclusive", junosOp); !strings.Contains(out, "error: shared configuration database modified") {
		t.Errorf("exclusive over a modified shared candidate: %q", out)
	}
}

// rollback N reaches five versions back.
func TestJunosRollbackHistory(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos"})
	first := d.RunningConfig()
	c := junosCLI(t, d)
	c.run("configure", junosConfig)
	for i := 1; i <= 5; i++ {
		c.run("set system host-name srx-v"+strconv.Itoa(i), junosConfig)
		if out := c.run("commit", junosConfig); !strings.Contains(out, "commit complete") {
			t.Fatalf("commit %d: %q", i, out)
		}
	}
	if len(d.Commits()) != 6 {
		t.Fatalf("%d versions after 5 commits", len(d.Commits()))
	}
	if out := c.run("rollback 5", junosConfig); !strings.Contains(out, "load complete") {
		t.Errorf("rollback 5: %q", out)
	}
	if out := c.run("show | compare", junosConfig); !strings.Contains(out, "-  host-name srx-v5;\r\n+  host-name srx;") {
		t.Errorf("compare after rollback 5: %q", out)
	}
	if out := c.run("rollback 6", junosConfig); !strings.Contains(out, "error: rollback 6 does not exist") {
		t.Errorf("rollback 6: %q", out)
	}
	c.run("commit", junosConfig)
	if d.RunningConfig() != first {
		t.Error("rollback 5 and commit did not bring back the first version")
	}
}

// load set and load merge change the candidate, a dropped line vanishes
// at commit without a word.
func TestJunosLoadSetMergeAndDrop(t *testing.T) {
	d := startDevice(t, Options{Platform: "juniper_junos", DropLines: regexp.MustCompile(`^boot-server `)})
	c := junosCLI(t, d)
	c.run("configure", junosConfig)
	c.run("load set terminal", "[Type ^D at a new line to end input]\r\n")
	send(t, c.w, "set system host-name srx-set\nset system ntp boot-server 192.0.2.99\nbogus line\n\x04")
	out := c.e.must(t, junosConfig)
	if !strings.Contains(out, "terminal:3:(0) syntax error: bogus\r\nload complete\r\n") {
		t.Errorf("load set printed %q", out)
	}
	c.run("load merge terminal", "[Type ^D at a new line to end input]\r\n")
	send(t, c.w, "snmp {\n    location lab;\n}\n\x04")
	c.e.must(t, junosConfig)
	out = c.run("show | compare", junosConfig)
	for _, want := range []string{"+  host-name srx-set;", "+    boot-server 192.0.2.99;", "[edit snmp]\r\n+  location lab;"} {
		if !strings.Contains(out, want) {
			t.Errorf("compare lacks %q:\n%s", want, out)
		}
	}
	c.run("commit", junosConfig)
	r := d.RunningConfig()
	if !strings.Contains(r, "host-name srx-set;") || !strings.Contains(r, "location lab;") || strings.Contains(r, "boot-server") {
		t.Errorf("committed configuration wrong; boot-server kept: %v", strings.Contains(r, "boot-server"))
	}
}
