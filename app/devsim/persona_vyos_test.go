package devsim

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

const (
	vyosOp     = "admin@vyos:~$ "
	vyosConfig = "admin@vyos# "
)

func vyosCLI(t *testing.T, d *Device) *cli {
	c := openCLI(t, d, vyosOp)
	c.run("set terminal length 0", vyosOp)
	return c
}

// The restore path: configure, delete and set, compare, commit-confirm,
// confirm, save.
func TestVyOSCommitConfirm(t *testing.T) {
	d := startDevice(t, Options{Platform: "vyos", ConfigSize: MinConfigSize})
	before := d.RunningConfig()
	target := strings.Replace(before, "set system host-name 'vyos'\n", "set system host-name 'vyos-restored'\n", 1) + "set system time-zone 'UTC'\n"
	c := vyosCLI(t, d)
	if out := c.run("configure", vyosConfig); !strings.Contains(out, "[edit]\r\n") {
		t.Errorf("configure: %q", out)
	}
	if out := c.run("compare", vyosConfig); !strings.Contains(out, "No changes between working and active configurations.") {
		t.Errorf("compare without changes: %q", out)
	}
	// As a restore does it: every top node deleted, every line set.
	for _, top := range []string{"interfaces", "firewall", "protocols", "service", "system"} {
		c.run("delete "+top, vyosConfig)
	}
	for _, l := range vyosLines(target) {
		c.run(l, vyosConfig)
	}
	out := c.run("compare", vyosConfig)
	if !strings.Contains(out, "[edit system]\r\n>host-name 'vyos-restored'\r\n+time-zone 'UTC'\r\n") {
		t.Errorf("compare: %q", out)
	}
	if out := c.run("compare commands", vyosConfig); !strings.Contains(out, "delete system host-name vyos\r\n") || !strings.Contains(out, "set system time-zone 'UTC'\r\n") {
		t.Errorf("compare commands: %q", out)
	}
	if out := c.run("exit", vyosConfig); !strings.Contains(out, "Cannot exit: configuration modified.\r\nUse 'exit discard' to discard the changes and exit.") {
		t.Errorf("exit with changes: %q", out)
	}
	out = c.run("commit-confirm 5", "Proceed ? [Y/n] ")
	if !strings.Contains(out, "commit-confirm will automatically reboot in 5 minutes unless changes\r\nare confirmed.\r\n\r\nProceed ? [Y/n] ") {
		t.Errorf("commit-confirm question: %q", out)
	}
	if out := c.run("y", vyosConfig); !strings.Contains(out, "Initialized commit-confirm; 5 minutes to confirm before reboot") {
		t.Errorf("commit-confirm: %q", out)
	}
	if d.RunningConfig() != target {
		t.Fatalf("running configuration after commit-confirm:\n%s", d.RunningConfig())
	}
	if out := c.run("commit-confirm 1", vyosConfig); !strings.Contains(out, "Another confirm is pending") {
		t.Errorf("second commit-confirm: %q", out)
	}
	if out := c.run("confirm", vyosConfig); !strings.Contains(out, "Reboot timer stopped") {
		t.Errorf("confirm: %q", out)
	}
	if out := c.run("confirm", vyosConfig); !strings.Contains(out, "No confirm pending") {
		t.Errorf("second confirm: %q", out)
	}
	if out := c.run("save", vyosConfig); !strings.Contains(out, "Saving configuration to '/config/config.boot'...\r\nDone") {
		t.Errorf("save: %q", out)
	}
	if d.StartupConfig() != target {
		t.Error("save did not save")
	}
	if out := c.run("exit", vyosOp); strings.Contains(out, "Warning") {
		t.Errorf("exit after save: %q", out)
	}
	if got := sshExec(t, d, "show configuration commands"); got != target {
		t.Error("backup after the restore is not the target")
	}
}

// No confirm: VyOS reboots into its saved configuration; every session
// is dropped, the next backup sees the old configuration.
func TestVyOSConfirmTimerReboots(t *testing.T) {
	d := startDevice(t, Options{Platform: "vyos", ConfigSize: MinConfigSize, Minute: 400 * time.Millisecond})
	before := d.RunningConfig()
	c := vyosCLI(t, d)
	other := vyosCLI(t, d)
	c.run("configure", vyosConfig)
	c.run("set system host-name 'changed'", vyosConfig)
	c.run("commit-confirm 1", "[Y/n] ")
	c.run("", vyosConfig)
	if !strings.Contains(d.RunningConfig(), "host-name 'changed'") {
		t.Fatal("commit-confirm did not commit")
	}
	other.e.must(t, "The system is going down for reboot NOW!")
	for _, x := range []*cli{c, other} {
		if _, err := x.e.waitEnd(wait); err != nil {
			t.Fatalf("session survived the reboot: %v", err)
		}
	}
	if d.RunningConfig() != before || d.Rollbacks() != 1 || lastCommit(d).Kind != CommitRollback {
		t.Error("the reboot did not bring back the saved configuration")
	}
	if got := sshExec(t, d, "show configuration commands"); got != before {
		t.Error("backup after the reboot is not the old configuration")
	}
}

// A session lost right after commit-confirm: the reboot restores.
func TestVyOSSessionLostBeforeConfirm(t *testing.T) {
	d := startDevice(t, Options{Platform: "vyos", ConfigSize: MinConfigSize, Minute: 150 * time.Millisecond, DisconnectAfter: regexp.MustCompile(`^commit-confirm`)})
	before := d.RunningConfig()
	c := vyosCLI(t, d)
	c.run("configure", vyosConfig)
	c.run("set system host-name 'changed'", vyosConfig)
	c.run("commit-confirm 1", "[Y/n] ")
	send(t, c.w, "y\n")
	if _, err := c.e.waitEnd(wait); err != nil {
		t.Fatalf("session not dropped: %v", err)
	}
	waitFor(t, "reboot", wait, func() bool { return d.Rollbacks() == 1 })
	if d.RunningConfig() != before {
		t.Error("the reboot did not bring back the saved configuration")
	}
}

// A refused set changes nothing; a dropped line vanishes at commit; exit
// discard leaves the rest.
func TestVyOSRejectDropDiscard(t *testing.T) {
	d := startDevice(t, Options{Platform: "vyos", ConfigSize: MinConfigSize,
		RejectLines: regexp.MustCompile(`^time-zone `), DropLines: regexp.MustCompile(`domain-name`)})
	before := d.RunningConfig()
	c := vyosCLI(t, d)
	c.run("configure", vyosConfig)
	if out := c.run("set system time-zone 'UTC'", vyosConfig); !strings.Contains(out, "Configuration path: [system time-zone] is not valid\r\n  Set failed") {
		t.Errorf("refused set: %q", out)
	}
	c.run("set system domain-name 'example.net'", vyosConfig)
	c.run("set system host-name 'kept'", vyosConfig)
	if out := c.run("commit", vyosConfig); strings.Contains(out, "No configuration changes") {
		t.Errorf("commit: %q", out)
	}
	r := d.RunningConfig()
	if strings.Contains(r, "domain-name") || strings.Contains(r, "time-zone") || !strings.Contains(r, "host-name 'kept'") {
		t.Errorf("committed configuration wrong:\n%s", r)
	}
	if out := c.run("commit", vyosConfig); !strings.Contains(out, "No configuration changes to commit") {
		t.Errorf("second commit: %q", out)
	}
	c.run("delete interfaces", vyosConfig)
	if out := c.run("delete nothing here", vyosConfig); !strings.Contains(out, "Nothing to delete") {
		t.Errorf("delete of nothing: %q", out)
	}
	if out := c.run("exit discard", vyosOp); !strings.Contains(out, "Warning: configuration changes have not been saved.") {
		t.Errorf("exit discard: %q", out)
	}
	if strings.Contains(d.RunningConfig(), "interfaces") != strings.Contains(before, "interfaces") {
		t.Error("exit discard applied the delete")
	}
}
