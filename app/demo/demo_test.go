package demo_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/demo"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/internal/testkit"
)

// A changed demo device logs its change to the syslog listener as its
// platform words it, and is backed up with trigger syslog: the fleet
// shares 127.0.0.1, so the listener finds each device by the hostname in
// its message.
func TestChangedDevicesLogToSyslog(t *testing.T) {
	store, sealer, _ := testkit.OpenData(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fleet, err := demo.Start(ctx, store, sealer, log)
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	engine := backup.New(store, sealer, log, backup.Options{Workers: 4})
	done := make(chan struct{})
	go func() { defer close(done); _ = engine.Run(ctx) }()
	defer func() { cancel(); <-done }()
	st, err := backup.StartSyslog(ctx, store, engine, backup.SyslogOptions{Addr: "127.0.0.1:0", Debounce: time.Second, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fleet.LogTo(st.Addr())

	changed := []string{"core-rtr-01", "edge-rtr-01", "dc-fw-02", "campus-sw-03"} // IOS, Junos, FortiOS, Comware
	for _, name := range changed {
		if !fleet.Change(name) {
			t.Fatalf("no demo device %s", name)
		}
	}
	backedUp := func() map[string]string {
		rows, err := dbtest.Peek(t, store).QueryContext(ctx, `SELECT d.name, b.trigger FROM backups b JOIN devices d ON d.id = b.device_id
			WHERE b.success = 1`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var name, trigger string
			if err := rows.Scan(&name, &trigger); err != nil {
				t.Fatal(err)
			}
			out[name] = trigger
		}
		return out
	}
	var got map[string]string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got = backedUp()
		all := len(got) == len(changed)
		for _, name := range changed {
			all = all && got[name] == queue.TriggerSyslog
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s, backups %v; syslog %+v", got, st.Stats())
		}
	}
	if s := st.Stats(); s.UnknownSender != 0 || s.Queued != uint64(len(changed)) {
		t.Fatalf("stats %+v", s)
	}
}
