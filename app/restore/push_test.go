package restore_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"backupd/app/gitmirror"
	"backupd/app/restore"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/testfrr"
)

// routers starts n real FRR routers edge1…edgeN and registers them.
func (e *env) routers(n int) ([]*testfrr.Router, []int64) {
	e.t.Helper()
	rs := make([]*testfrr.Router, n)
	ids := make([]int64, n)
	for i := range rs {
		rs[i] = testfrr.Start(e.t, testfrr.Options{Hostname: fmt.Sprintf("edge%d", i+1)})
		_, p, _ := net.SplitHostPort(rs[i].Addr)
		port, _ := strconv.Atoi(p)
		ids[i] = e.addDevice(rs[i].Hostname, "frr", port, db.Credential{Name: rs[i].Hostname, Username: rs[i].User,
			PrivateKey: e.sealer.Seal(string(rs[i].PrivateKey), secret.PurposePrivateKey)})
	}
	return rs, ids
}

// untilSet ticks the dispatcher until the change set is in one of
// states.
func (e *env) untilSet(id int64, states ...string) db.ChangeSet {
	e.t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if err := e.disp.Tick(ctx); err != nil {
			e.t.Fatal(err)
		}
		c, err := e.store.ChangeSet(ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if slices.Contains(states, c.State) {
			return c
		}
		time.Sleep(30 * time.Millisecond)
	}
	c, _ := e.store.ChangeSet(ctx, id)
	e.t.Fatalf("change set %d is %s, want %v\n%s", id, c.State, states, e.log.String())
	return c
}

// The proof: a snippet pushed to 5 real FRR routers, two at a
// time, changes all 5, and each gets a backup before and one after with
// the trigger "push", the one after a change.
func TestPushToFiveRealFRRRouters(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	ctx := context.Background()
	rs, ids := e.routers(5)
	// The git mirror holds each router's configuration of before.
	for _, id := range ids {
		e.device = id
		e.backup()
	}
	mirror := gitmirror.New(e.store, e.sealer, slog.New(slog.NewTextHandler(e.log, nil)), t.TempDir())
	if _, err := mirror.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := e.svc.CreateChangeSet(ctx, e.admin, restore.NewChangeSet{Name: "new peer", Concurrency: 2,
		Body:      "router bgp 65001\n neighbor 192.0.2.77 remote-as 65077\n neighbor 192.0.2.77 description peering-{{.Name}}\n",
		Template:  true,
		DeviceIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	if c.State != db.ChangeSetReady {
		t.Fatalf("after the dry run the set is %s", c.State)
	}
	targets, err := e.store.ChangeSetTargets(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, tg := range targets {
		if tg.Rendered == nil || !strings.Contains(*tg.Rendered, fmt.Sprintf(" neighbor 192.0.2.77 description peering-edge%d\n", i+1)) {
			t.Errorf("dry run for %s: %v %v", tg.DeviceName, deref(tg.Rendered), deref(tg.RenderError))
		}
	}
	if _, err := e.svc.ApproveChangeSet(ctx, e.admin, c.ID, ""); err != nil {
		t.Fatal(err)
	}
	c = e.untilSet(c.ID, db.ChangeSetDone, db.ChangeSetStopped)
	if c.State != db.ChangeSetDone {
		t.Fatalf("change set %s: %s", c.State, deref(c.Error))
	}
	targets, _ = e.store.ChangeSetTargets(ctx, c.ID)
	for i, tg := range targets {
		if tg.State != db.TargetSucceeded {
			t.Errorf("%s: %s: %s", tg.DeviceName, tg.State, deref(tg.Error))
			continue
		}
		conf := rs[i].RunningConfig(t)
		if !strings.Contains(conf, " neighbor 192.0.2.77 remote-as 65077\n") || !strings.Contains(conf, fmt.Sprintf("peering-edge%d\n", i+1)) {
			t.Errorf("%s does not run the change:\n%s", tg.DeviceName, conf)
		}
		for name, id := range map[string]*string{"before": tg.PreBackupID, "after": tg.PostBackupID} {
			if id == nil {
				t.Errorf("%s: no backup %s", tg.DeviceName, name)
				continue
			}
			b, err := e.store.GetBackup(ctx, *id)
			if err != nil || !b.Success || b.Trigger != queue.TriggerPush || (name == "after") != b.Changed {
				t.Errorf("%s: backup %s: %+v %v", tg.DeviceName, name, b, err)
			}
		}
	}
	// The mirror's next commit is the push: every router changed, by
	// the trigger push, as the real git reads it.
	if _, err := mirror.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", mirror.Dir(), "log", "-1", "--format=%B").CombinedOutput()
	if err != nil {
		t.Fatalf("git log: %v\n%s", err, out)
	}
	for _, r := range rs {
		if !strings.Contains(string(out), "- "+r.Hostname+": changed (trigger: push)\n") {
			t.Errorf("the mirror's commit does not record %s's push:\n%s", r.Hostname, out)
		}
	}
}

// A device that refuses a line: its push stops there with the router's
// answer; with stop-after-1 and one device at a time, the devices after
// it are skipped and the set says it stopped.
func TestPushStopsAfterFailuresOnRealFRR(t *testing.T) {
	t.Parallel() // see newEngineEnvOpen
	e := newEngineEnv(t)
	ctx := context.Background()
	rs, ids := e.routers(4)
	c, err := e.svc.CreateChangeSet(ctx, e.admin, restore.NewChangeSet{Name: "wrong AS on edge2", Concurrency: 1, StopAfterFailures: 1,
		Body:     "{{if eq .Name \"edge2\"}}router bgp 65099{{else}}router bgp 65001{{end}}\n neighbor 192.0.2.78 remote-as 65078\n",
		Template: true, DeviceIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.ApproveChangeSet(ctx, e.admin, c.ID, ""); err != nil {
		t.Fatal(err)
	}
	c = e.untilSet(c.ID, db.ChangeSetDone, db.ChangeSetStopped)
	if c.State != db.ChangeSetStopped {
		t.Fatalf("change set %s", c.State)
	}
	targets, _ := e.store.ChangeSetTargets(ctx, c.ID)
	got := []string{}
	for _, tg := range targets {
		got = append(got, tg.State)
	}
	if strings.Join(got, ",") != "succeeded,failed,skipped,skipped" {
		t.Fatalf("targets %v", got)
	}
	if msg := deref(targets[1].Error); !strings.Contains(msg, "BGP is already running; AS is 65001") || deref(targets[1].ErrorReason) != restore.ReasonRefused {
		t.Errorf("edge2's error: %s (%s)", msg, deref(targets[1].ErrorReason))
	}
	if strings.Contains(rs[1].RunningConfig(t), "192.0.2.78") || strings.Contains(rs[2].RunningConfig(t), "192.0.2.78") {
		t.Error("a device that failed or was skipped got the change")
	}
	if !strings.Contains(rs[0].RunningConfig(t), "192.0.2.78") {
		t.Error("edge1 did not get the change")
	}
}

// Bad input: a template variable a device lacks is that device's dry-run
// error (the set stays a draft and cannot be approved); a body with a
// control character, a concurrency out of bounds and an unparsable
// template are refused before anything is stored.
func TestChangeSetBadInput(t *testing.T) {
	e := newEngineEnv(t)
	ctx := context.Background()
	_, ids := e.routers(1)
	c, err := e.svc.CreateChangeSet(ctx, e.admin, restore.NewChangeSet{Name: "missing var", Concurrency: 1,
		Body: "router bgp 65001\n neighbor {{.Vars.peer}} remote-as 65000\n", Template: true, DeviceIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	targets, _ := e.store.ChangeSetTargets(ctx, c.ID)
	if c.State != db.ChangeSetDraft || !strings.Contains(deref(targets[0].RenderError), "peer") {
		t.Errorf("set %s, render error %q", c.State, deref(targets[0].RenderError))
	}
	if _, err := e.svc.ApproveChangeSet(ctx, e.admin, c.ID, ""); err == nil {
		t.Error("a draft was approved")
	}
	// A set that rendered waits for its approval as long as a restore
	// request does (24 hours by default), then expires.
	ready, err := e.svc.CreateChangeSet(ctx, e.admin, restore.NewChangeSet{Name: "ready", Concurrency: 1,
		Body: "ip prefix-list READY seq 5 permit 10.0.0.0/8\n", DeviceIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	if ready.State != db.ChangeSetReady || ready.ExpiresAt == nil {
		t.Fatalf("a rendered set: %s, expires %v; want ready with an expiry", ready.State, ready.ExpiresAt)
	}
	if until, err := time.Parse(db.TimeFormat, *ready.ExpiresAt); err != nil || time.Until(until) < 23*time.Hour || time.Until(until) > 25*time.Hour {
		t.Errorf("a rendered set expires at %s (%v); want in 24 hours", *ready.ExpiresAt, err)
	}

	// A disabled device renders nothing: the set stays a draft.
	if _, err := e.store.UpdateDevice(ctx, ids[0], func(d *db.Device) error { d.Enabled = false; return nil }); err != nil {
		t.Fatal(err)
	}
	off, err := e.svc.CreateChangeSet(ctx, e.admin, restore.NewChangeSet{Name: "disabled", Concurrency: 1,
		Body: "ip prefix-list OFF seq 5 permit 10.0.0.0/8\n", DeviceIDs: ids})
	if err != nil {
		t.Fatal(err)
	}
	targets, _ = e.store.ChangeSetTargets(ctx, off.ID)
	if off.State != db.ChangeSetDraft || !strings.Contains(deref(targets[0].RenderError), "disabled") {
		t.Errorf("a disabled device: set %s, render error %q", off.State, deref(targets[0].RenderError))
	}
	for name, n := range map[string]restore.NewChangeSet{
		"control":     {Name: "x", Concurrency: 1, Body: "router bgp 65001\x07\n", DeviceIDs: ids},
		"concurrency": {Name: "x", Concurrency: 0, Body: "router bgp 65001\n", DeviceIDs: ids},
		"template":    {Name: "x", Concurrency: 1, Body: "{{if}}\n", Template: true, DeviceIDs: ids},
	} {
		if _, err := e.svc.CreateChangeSet(ctx, e.admin, n); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
