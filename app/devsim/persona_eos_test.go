package devsim

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

const (
	eosExec    = "leaf1#"
	eosSession = "leaf1(config-s-backup)#"
)

// eosTarget is before with another hostname and a second NTP server.
func eosTarget(before string) string {
	return strings.NewReplacer("hostname leaf1\n", "hostname leaf1-restored\n",
		"ntp server vrf MGMT 192.0.2.123\n", "ntp server vrf MGMT 192.0.2.123\nntp server vrf MGMT 192.0.2.124\n").Replace(before)
}

// typeSession types a configuration into a session as a restore does:
// every line but "end", indentation kept.
func typeSession(c *cli, text string) {
	for _, l := range eosBody(text) {
		c.run(l, ")#")
	}
}

// The restore path: a session from the clean configuration, the diff,
// commit timer, the confirm, write memory.
func TestEOSSessionCommitTimer(t *testing.T) {
	d := startDevice(t, Options{Platform: "arista_eos", ConfigSize: MinConfigSize, Minute: 100 * time.Millisecond})
	before := d.RunningConfig()
	shown := strings.ReplaceAll(sshExec(t, d, "show running-config"), "\r\n", "\n")
	target := eosTarget(before)
	if target == before {
		t.Fatal("the target does not differ")
	}
	c := openCLI(t, d, eosExec)
	c.run("configure session backupd-t1", eosSession)
	c.run("rollback clean-config", eosSession)
	if out := c.run("interface Ethernet1", ")#"); !strings.HasSuffix(out, "leaf1(config-s-backup-if-Et1)#") {
		t.Errorf("prompt in an interface: %q", tail(out))
	}
	c.run("exit", eosSession)
	c.run("rollback clean-config", eosSession)
	typeSession(c, target)
	// The last line typed left the session in its mode.
	out := c.run("show session-config diffs", ")#")
	for _, want := range []string{"--- system:/running-config\r\n+++ session:/backupd-t1-session-config\r\n@@ -",
		"\r\n-hostname leaf1\r\n+hostname leaf1-restored\r\n", "\r\n+ntp server vrf MGMT 192.0.2.124\r\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("diffs lack %q:\n%s", want, out)
		}
	}
	if d.RunningConfig() != before {
		t.Fatal("typing in a session changed the running configuration")
	}
	c.run("commit timer 00:05:00", eosExec)
	if d.RunningConfig() != target || lastCommit(d).Kind != CommitConfirmed {
		t.Fatalf("commit timer did not commit (%s):\n%s", lastCommit(d).Kind, d.RunningConfig())
	}
	if _, pending := d.ConfirmPending(); !pending {
		t.Error("no confirm pending after commit timer")
	}
	if out := c.run("show configuration sessions", eosExec); !regexp.MustCompile(`backupd-t1 +pendingCommitTimer +admin`).MatchString(out) {
		t.Errorf("sessions: %q", out)
	}
	if out := c.run("configure session backupd-t1 commit", eosExec); strings.Contains(out, "%") {
		t.Errorf("confirm: %q", out)
	}
	if _, pending := d.ConfirmPending(); pending {
		t.Error("the confirm left the timer running")
	}
	// Six minutes of device time: a timer still running would roll back.
	time.Sleep(700 * time.Millisecond)
	if d.Rollbacks() != 0 || d.RunningConfig() != target {
		t.Error("the confirmed commit was rolled back")
	}
	if out := c.run("write memory", eosExec); !strings.Contains(out, "Copy completed successfully.") {
		t.Errorf("write memory: %q", out)
	}
	if d.StartupConfig() != target {
		t.Error("write memory did not save")
	}
	if got, want := strings.ReplaceAll(sshExec(t, d, "show running-config"), "\r\n", "\n"), eosTarget(shown); got != want || want == shown {
		t.Errorf("a backup after the restore is not the target:\n%s", got)
	}
	if out := c.run("configure session backupd-t1", eosExec); !strings.Contains(out, "already committed") {
		t.Errorf("entering a committed session: %q", out)
	}
}

// Without the second commit the switch goes back on its own.
func TestEOSCommitTimerRollsBack(t *testing.T) {
	d := startDevice(t, Options{Platform: "arista_eos", ConfigSize: MinConfigSize, Minute: 100 * time.Millisecond})
	before := d.RunningConfig()
	c := openCLI(t, d, eosExec)
	c.run("configure session backupd-t2", eosSession)
	c.run("hostname changed", eosSession)
	c.run("commit timer 00:01:00", eosExec)
	if !strings.Contains(d.RunningConfig(), "hostname changed\n") {
		t.Fatal("commit timer did not commit")
	}
	waitFor(t, "the rollback", wait, func() bool { return d.Rollbacks() == 1 })
	if d.RunningConfig() != before || lastCommit(d).Kind != CommitRollback {
		t.Error("the timer did not bring the configuration back")
	}
	if out := c.run("configure session backupd-t2 commit", eosExec); !strings.Contains(out, "% Session backupd-t2 does not exist") {
		t.Errorf("confirm after the rollback: %q", out)
	}
	for _, bad := range []string{"00:00:00", "1:60:00", "5", "00:05"} {
		c.run("configure session backupd-t3", eosSession)
		if out := c.run("commit timer "+bad, ")#"); !strings.Contains(out, "% Invalid input") {
			t.Errorf("commit timer %s: %q", bad, out)
		}
		c.run("abort", eosExec)
	}
}

// Abort before the commit throws the session away; abort while the
// timer runs puts the configuration back at once.
func TestEOSAbort(t *testing.T) {
	d := startDevice(t, Options{Platform: "arista_eos", ConfigSize: MinConfigSize})
	before := d.RunningConfig()
	commits := len(d.Commits())
	c := openCLI(t, d, eosExec)
	c.run("configure session backupd-t4", eosSession)
	c.run("rollback clean-config", eosSession)
	c.run("abort", eosExec)
	if d.RunningConfig() != before || len(d.Commits()) != commits {
		t.Fatal("an aborted session changed the configuration")
	}
	c.run("configure session backupd-t4", eosSession)
	c.run("hostname changed", eosSession)
	c.run("end", eosExec)
	c.run("configure session backupd-t4 commit timer 00:10:00", eosExec)
	if !strings.Contains(d.RunningConfig(), "hostname changed\n") {
		t.Fatal("commit timer from exec mode did not commit")
	}
	c.run("configure session backupd-t4 abort", eosExec)
	if d.RunningConfig() != before || lastCommit(d).Kind != CommitRevert || d.Rollbacks() != 0 {
		t.Errorf("abort during the timer did not put the configuration back (%s)", lastCommit(d).Kind)
	}
	if _, pending := d.ConfirmPending(); pending {
		t.Error("the timer still runs after the abort")
	}
	if out := c.run("configure session backupd-t4 abort", eosExec); !strings.Contains(out, "% Session backupd-t4 does not exist") {
		t.Errorf("second abort: %q", out)
	}
}

// A refused line stays out of the session; a dropped line vanishes at
// commit; a login lost after commit timer leaves the timer to roll back.
func TestEOSRejectDropDisconnect(t *testing.T) {
	d := startDevice(t, Options{Platform: "arista_eos", ConfigSize: MinConfigSize, Minute: 100 * time.Millisecond,
		RejectLines: regexp.MustCompile(`^ip domain lookup`), DropLines: regexp.MustCompile(`^snmp-server community `),
		DisconnectAfter: regexp.MustCompile(`^commit timer`)})
	before := d.RunningConfig()
	if !strings.Contains(before, "snmp-server community ") {
		t.Fatal("no community to drop")
	}
	c := openCLI(t, d, eosExec)
	c.run("configure session backupd-t5", eosSession)
	if out := c.run("ip domain lookup source-interface Management1", eosSession); !strings.Contains(out, "% Invalid input") {
		t.Errorf("refused line: %q", out)
	}
	c.run("hostname changed", eosSession)
	send(t, c.w, "commit timer 00:01:00\n")
	if _, err := c.e.waitEnd(wait); err != nil {
		t.Fatalf("the login was not dropped: %v", err)
	}
	got := d.RunningConfig()
	if strings.Contains(got, "ip domain lookup") || strings.Contains(got, "snmp-server community") || !strings.Contains(got, "hostname changed\n") {
		t.Errorf("committed configuration:\n%s", got)
	}
	waitFor(t, "the rollback", wait, func() bool { return d.Rollbacks() == 1 })
	if d.RunningConfig() != before {
		t.Error("the timer did not bring the configuration back")
	}
}
