package restore_test

import (
	"context"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"backupd/app/devsim"
	"backupd/app/restore"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
)

// simNamed starts a simulated device of platform named name and
// registers it, returning its ID.
func (e *env) simNamed(name, platform string, o devsim.Options) (*devsim.Device, int64) {
	e.t.Helper()
	o.Platform, o.Hostname, o.SSHAddr = platform, name, "127.0.0.1:0"
	o.Username, o.Password = "netops", "Pa55-not-in-logs"
	d, err := devsim.NewDevice(o)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { d.Close() })
	_, p, _ := net.SplitHostPort(d.SSHAddr())
	port, _ := strconv.Atoi(p)
	return d, e.addDevice(name, platform, port, db.Credential{Name: name, Username: o.Username,
		Password: e.sealer.Seal(o.Password, secret.PurposePassword)})
}

// A change set pushed to classic IOS and NX-OS, which take it as a merge
// takes a restore's lines: each line in configuration mode (an
// interface's line after the interface), saved, a backup before and one
// after with the trigger push. A switch that refuses a line stops there
// with its answer, unsaved.
func TestPushToIOSAndNXOS(t *testing.T) {
	e := newEngineEnv(t)
	ctx := context.Background()
	ios, iosID := e.simNamed("acc-sw-1", "cisco_ios", devsim.Options{})
	nxos, nxosID := e.simNamed("dc-sw-1", "cisco_nxos", devsim.Options{})
	refuser, refuserID := e.simNamed("acc-sw-2", "cisco_ios", devsim.Options{RejectLines: regexp.MustCompile(`^ntp server 192\.0\.2\.199$`)})
	body := "interface {{.Vars.port}}\n description uplink-{{.Name}}\nntp server 192.0.2.199\nsnmp-server contact ops@example.org\n"
	c, err := e.svc.CreateChangeSet(ctx, e.admin, restore.NewChangeSet{Name: "uplinks", Concurrency: 3, Body: body, Template: true,
		Variables: map[string]string{"port": "Ethernet1/1"}, DeviceIDs: []int64{nxosID}})
	if err != nil {
		t.Fatal(err)
	}
	if c.State != db.ChangeSetReady {
		targets, _ := e.store.ChangeSetTargets(ctx, c.ID)
		t.Fatalf("NX-OS dry run: %s, %s", c.State, deref(targets[0].RenderError))
	}
	if _, err := e.svc.ApproveChangeSet(ctx, e.admin, c.ID, ""); err != nil {
		t.Fatal(err)
	}
	if c = e.untilSet(c.ID, db.ChangeSetDone, db.ChangeSetStopped); c.State != db.ChangeSetDone {
		t.Fatalf("NX-OS change set %s: %s", c.State, deref(c.Error))
	}

	c, err = e.svc.CreateChangeSet(ctx, e.admin, restore.NewChangeSet{Name: "uplinks ios", Concurrency: 1, StopAfterFailures: 0,
		Body: body, Template: true, Variables: map[string]string{"port": "GigabitEthernet0/1"}, DeviceIDs: []int64{iosID, refuserID}})
	if err != nil || c.State != db.ChangeSetReady {
		t.Fatalf("IOS dry run: %+v, %v", c, err)
	}
	if _, err := e.svc.ApproveChangeSet(ctx, e.admin, c.ID, ""); err != nil {
		t.Fatal(err)
	}
	e.untilSet(c.ID, db.ChangeSetDone, db.ChangeSetStopped)
	targets, err := e.store.ChangeSetTargets(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}

	for _, sw := range []struct {
		d                *devsim.Device
		name, port, save string
	}{{nxos, "dc-sw-1", "interface Ethernet1/1\n", "copy running-config startup-config"}, {ios, "acc-sw-1", "interface GigabitEthernet0/1\n", "write memory"}} {
		run := sw.d.RunningConfig()
		if !strings.Contains(section(run, sw.port), "description uplink-"+sw.name+"\n") {
			t.Errorf("%s: the description is not under its interface:\n%s", sw.name, run)
		}
		if !strings.Contains(run, "\nntp server 192.0.2.199") || !strings.Contains(run, "\nsnmp-server contact ops@example.org\n") {
			t.Errorf("%s: the global lines are missing:\n%s", sw.name, run)
		}
		if sw.d.StartupConfig() != run {
			t.Errorf("%s: the push was not saved (%s)", sw.name, sw.save)
		}
	}
	ok, refused := targets[0], targets[1]
	if ok.State != db.TargetSucceeded || ok.PostBackupID == nil {
		t.Fatalf("acc-sw-1: %s: %s", ok.State, deref(ok.Error))
	}
	if b, err := e.store.GetBackup(ctx, *ok.PostBackupID); err != nil || !b.Changed || b.Trigger != queue.TriggerPush {
		t.Errorf("acc-sw-1's backup after: %+v, %v", b, err)
	}
	if refused.State != db.TargetFailed || deref(refused.ErrorReason) != restore.ReasonRefused ||
		!strings.Contains(deref(refused.Error), `"ntp server 192.0.2.199"`) || !strings.Contains(deref(refused.Error), "% Invalid input") {
		t.Errorf("acc-sw-2: %s (%s): %s", refused.State, deref(refused.ErrorReason), deref(refused.Error))
	}
	run := refuser.RunningConfig()
	if !strings.Contains(run, "description uplink-acc-sw-2\n") || strings.Contains(run, "ops@example.org") {
		t.Errorf("acc-sw-2 took the lines before the refused one and none after? \n%s", run)
	}
	if refuser.StartupConfig() == run {
		t.Error("acc-sw-2 saved a push that stopped half way")
	}
}

// Lines a merge cannot send one by one (a banner) are refused by the dry
// run, naming them: the set stays a draft and nothing is sent.
func TestPushRefusesABannerToIOS(t *testing.T) {
	e := newEngineEnv(t)
	ctx := context.Background()
	_, id := e.simNamed("acc-sw-1", "cisco_ios", devsim.Options{})
	c, err := e.svc.CreateChangeSet(ctx, e.admin, restore.NewChangeSet{Name: "banner", Concurrency: 1,
		Body: "snmp-server contact ops@example.org\nbanner motd ^C\nAuthorised access only\n^C\n", DeviceIDs: []int64{id}})
	if err != nil {
		t.Fatal(err)
	}
	targets, err := e.store.ChangeSetTargets(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if msg := deref(targets[0].RenderError); c.State != db.ChangeSetDraft || !strings.Contains(msg, "lines 2-4 of the lines to send are a banner") ||
		!strings.Contains(msg, restore.ErrPushBlock.Error()) {
		t.Errorf("set %s, dry run: %q", c.State, msg)
	}
}

// section is the block of configuration under header (a line, with its
// newline): the indented lines that follow it.
func section(conf, header string) string {
	i := strings.Index(conf, "\n"+header)
	if i < 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(conf[i+1+len(header):], "\n") {
		if !strings.HasPrefix(l, " ") {
			break
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}
