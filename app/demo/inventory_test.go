package demo_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/demo"
	"backupd/app/insync"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/testkit"
)

// The demo's inventory source, synced as Settings → Inventory sources
// syncs it: a dry run lists a create per device of the inventory and
// writes nothing; the sync creates them enabled, in the demo lab, with
// the demo login, and the real engine backs one up. A restart keeps one
// source, points it at the new server and the devices at their new
// ports (the next sync finds nothing to change, and the backup still
// works); a demo source the user pointed elsewhere is left alone.
func TestDemoInventorySync(t *testing.T) {
	store, sealer, _ := testkit.OpenData(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	fleet, err := demo.Start(ctx, store, sealer, log)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	inv, err := demo.StartInventory(ctx, store, sealer, log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { inv.Close() }()
	by := db.AuditEntry{Username: "admin", Interface: "web"}
	syncer := insync.Syncer{Store: store, Sealer: sealer}
	names := demo.InventoryNames()
	if len(names) < 2 || slices.ContainsFunc(names, func(n string) bool { return slices.Contains(demo.Names(), n) }) {
		t.Fatalf("inventory devices %v: want a few, none of the lab's", names)
	}
	byAction := func(rep insync.Report) map[insync.Action][]string {
		out := map[insync.Action][]string{}
		for _, l := range rep.Lines {
			out[l.Action] = append(out[l.Action], l.Name)
		}
		for _, v := range out {
			slices.Sort(v)
		}
		return out
	}
	sorted := slices.Sorted(slices.Values(names))

	src, err := store.InventorySource(ctx, inv.SourceID())
	if err != nil || src.Name != demo.InventorySourceName || src.IntervalMinutes != 0 || !src.Enabled {
		t.Fatalf("source %+v, %v", src, err)
	}
	rep, err := syncer.Sync(ctx, inv.SourceID(), true, by)
	if err != nil {
		t.Fatalf("dry run: %v (%+v)", err, rep)
	}
	if got := byAction(rep); !slices.Equal(got[insync.ActCreate], sorted) || len(rep.Lines) != len(names) {
		t.Fatalf("dry run lines %+v", rep.Lines)
	}
	for _, n := range names {
		if _, err := store.DeviceByName(ctx, n); err == nil {
			t.Fatalf("the dry run created %s", n)
		}
	}

	rep, err = syncer.Sync(ctx, inv.SourceID(), false, by)
	if err != nil || !slices.Equal(byAction(rep)[insync.ActCreate], sorted) {
		t.Fatalf("sync: %v, lines %+v", err, rep.Lines)
	}
	cred, err := store.CredentialByName(ctx, demo.CredentialName)
	if err != nil {
		t.Fatal(err)
	}
	lab, err := store.GroupByName(ctx, demo.GroupName)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, n := range names {
		d, err := store.DeviceByName(ctx, n)
		if err != nil {
			t.Fatalf("%s not created: %v", n, err)
		}
		if !d.Enabled || d.CredentialID == nil || *d.CredentialID != cred.ID || d.GroupID == nil || *d.GroupID != lab.ID ||
			d.InventorySourceID == nil || *d.InventorySourceID != inv.SourceID() || d.Host != "127.0.0.1" || d.LoginMethod != "ssh" {
			t.Fatalf("device %s: %+v", n, d)
		}
		ids = append(ids, d.ID)
	}
	backUp := func(id int64) {
		t.Helper()
		engine := backup.New(store, sealer, log, backup.Options{Workers: 1})
		rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		jobs, err := engine.Enqueue(rctx, []int64{id}, queue.TriggerManual)
		if err != nil {
			t.Fatal(err)
		}
		var got []queue.Job
		if err := engine.RunJobs(rctx, jobs, func(j queue.Job) { got = append(got, j) }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].State != queue.JobSucceeded || got[0].BackupID == nil {
			t.Fatalf("backup of device %d: %+v", id, got)
		}
	}
	backUp(ids[0])

	// A restart: a new server on a new port, new simulator ports.
	first := inv.URL()
	inv.Close()
	if inv, err = demo.StartInventory(ctx, store, sealer, log); err != nil {
		t.Fatal(err)
	}
	srcs, err := store.InventorySources(ctx)
	if err != nil || len(srcs) != 1 || srcs[0].ID != inv.SourceID() {
		t.Fatalf("after a restart: sources %+v, %v", srcs, err)
	}
	cfg, err := insync.ParseConfig(srcs[0].Config)
	if err != nil || cfg.HTTP == nil || cfg.HTTP.URL != inv.URL() || inv.URL() == first {
		t.Fatalf("after a restart the source points at %+v (%v); the inventory is at %s, was at %s", cfg.HTTP, err, inv.URL(), first)
	}
	if got := inv.DeviceIDs(); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(ids))) {
		t.Fatalf("repointed devices %v, want %v", got, ids)
	}
	rep, err = syncer.Sync(ctx, inv.SourceID(), false, by)
	if got := byAction(rep); err != nil || !slices.Equal(got[insync.ActLeave], sorted) || len(rep.Lines) != len(names) {
		t.Fatalf("sync after a restart: %v, lines %+v", err, rep.Lines)
	}
	backUp(ids[0])

	// The user points the source at their own inventory: a restart
	// leaves it there.
	mine := json.RawMessage(`{"http": {"url": "https://cmdb.example.net/api/nodes", "map": {"name": "hostname"}}}`)
	if _, err := store.UpdateInventorySource(ctx, inv.SourceID(), func(s *db.InventorySource) error {
		s.Config = mine
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	inv.Close()
	if inv, err = demo.StartInventory(ctx, store, sealer, log); err != nil {
		t.Fatal(err)
	}
	if srcs, err = store.InventorySources(ctx); err != nil || len(srcs) != 1 {
		t.Fatalf("sources %+v, %v", srcs, err)
	}
	if cfg, err := insync.ParseConfig(srcs[0].Config); err != nil || cfg.HTTP.URL != "https://cmdb.example.net/api/nodes" {
		t.Fatalf("the user's source was changed: %s", srcs[0].Config)
	}
}
