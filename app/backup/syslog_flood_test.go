package backup_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/syslog"
	"backupd/db"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/internal/testkit"
)

// floodRig is the syslog trigger as serve wires it (a real SQLite store,
// the engine, StartSyslog on 127.0.0.1) with an engine that is not
// started, so that the jobs it queues stay queued for the test to read.
type floodRig struct {
	t     *testing.T
	store *db.Store
	trig  *backup.SyslogTrigger
	conn  net.Conn
	sent  uint64
}

func newFloodRig(t *testing.T, debounce time.Duration, devices map[string]string) (*floodRig, map[string]int64) {
	t.Helper()
	store, sealer, _ := testkit.OpenData(t)
	ids := map[string]int64{}
	for name, host := range devices {
		d, err := store.CreateDevice(context.Background(), db.Device{Name: name, Host: host, Port: 22, Platform: "cisco_ios",
			LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = d.ID
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	engine := backup.New(store, sealer, log, backup.Options{})
	trig, err := backup.StartSyslog(context.Background(), store, engine, backup.SyslogOptions{Addr: "127.0.0.1:0", Debounce: debounce, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { trig.Close() })
	c, err := net.Dial("udp", trig.Addr()) // from 127.0.0.1
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &floodRig{t: t, store: store, trig: trig, conn: c}, ids
}

func (r *floodRig) send(line string) {
	r.t.Helper()
	if _, err := r.conn.Write([]byte(line)); err != nil {
		r.t.Fatal(err)
	}
	r.sent++
}

// settle waits (bounded) until the listener has read every datagram sent
// or has read nothing new for 50 ms (the kernel dropped some), so that a
// flood is paced by the reader and the kernel drops nothing it need not.
func (r *floodRig) settle() {
	last, lastAt := r.trig.Stats().Received, time.Now()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		got := r.trig.Stats().Received
		if got >= r.sent || (got == last && time.Since(lastAt) > 50*time.Millisecond) {
			return
		}
		if got != last {
			last, lastAt = got, time.Now()
		}
	}
}

// wait waits (bounded) until ok holds on the trigger's counters.
func (r *floodRig) wait(what string, ok func(backup.SyslogStats) bool) backup.SyslogStats {
	r.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		s := r.trig.Stats()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("waiting for %s: %+v", what, s)
		}
	}
}

// queued returns the queued jobs with trigger syslog, by device.
func (r *floodRig) queued() map[int64]int {
	r.t.Helper()
	rows, err := dbtest.Peek(r.t, r.store).QueryContext(context.Background(),
		`SELECT device_id, COUNT(*) FROM jobs WHERE trigger = ? AND state = 'queued' GROUP BY device_id`, queue.TriggerSyslog)
	if err != nil {
		r.t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			r.t.Fatal(err)
		}
		out[id] = n
	}
	if err := rows.Err(); err != nil {
		r.t.Fatal(err)
	}
	return out
}

// Issue 23, as reported: from one sender address (a syslog relay, which
// every device behind it shares), 1,000 %LINK-3-UPDOWN lines every
// 100 ms for 3 s, with a configuration change of another device among
// them at 1 s and 2 s, over real UDP datagrams. The change lines used to
// be dropped with the noise by the sender's rate cap, and no backup
// happened; now the changed device's backup is queued, and the noise
// over the cap is counted as dropped lines of class other.
func TestSyslogFloodFromRelayQueuesTheChangedDevice(t *testing.T) {
	r, ids := newFloodRig(t, 500*time.Millisecond, map[string]string{"core-r1": "192.0.2.1", "edge-2": "192.0.2.2"})
	const link = "<187>Nov 25 12:00:00 edge-2 %LINK-3-UPDOWN: Interface GigabitEthernet0/1, changed state to down"
	const change = "<189>Nov 25 12:00:00 core-r1 %SYS-5-CONFIG_I: Configured from console by admin on vty0 (192.0.2.7)"
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for round := range 30 {
		for i := range 1000 {
			r.send(link)
			if (round == 10 || round == 20) && i == 549 {
				// Right behind the noise, in the middle of a burst:
				// the sender's budget is spent at this moment.
				r.send(change)
			}
			if (i+1)%100 == 0 {
				r.settle()
			}
		}
		if round == 10 || round == 20 {
			r.wait("the change in the flood", func(s backup.SyslogStats) bool { return s.Matched == uint64(round/10) })
		}
		<-tick.C
	}
	s := r.wait("the backup of core-r1", func(backup.SyslogStats) bool { return r.queued()[ids["core-r1"]] == 1 })
	if got := r.queued(); len(got) != 1 {
		t.Fatalf("queued syslog jobs by device %v; want one, of core-r1 (%d)", got, ids["core-r1"])
	}
	if s.Dropped[syslog.Drop{Class: syslog.ClassOther, Reason: syslog.DropRate}] == 0 ||
		s.Dropped[syslog.Drop{Class: syslog.ClassChange, Reason: syslog.DropRate}] != 0 || s.UnknownSender != 0 {
		t.Fatalf("after the flood: %+v", s)
	}
	t.Logf("%d of %d datagrams read, %d lines over the relay's budget, %d triggers", s.Received, r.sent,
		s.Dropped[syslog.Drop{Class: syslog.ClassOther, Reason: syslog.DropRate}], s.Triggered)
}

// A flood of nothing but change lines from one device is still
// debounced: one trigger, one queued backup; the lines over the device's
// budget are counted as dropped changes.
func TestSyslogChangeFloodIsOneBackup(t *testing.T) {
	r, ids := newFloodRig(t, 2*time.Second, map[string]string{"sw-9": "127.0.0.1"})
	const change = "<189>82: *Nov 25 12:00:00: %SYS-5-CONFIG_I: Configured from console by admin on vty0 (192.0.2.7)"
	for i := range 2000 {
		r.send(change)
		if (i+1)%100 == 0 {
			r.settle()
		}
	}
	s := r.wait("the backup queued", func(s backup.SyslogStats) bool { return s.Queued > 0 && s.PendingDevices == 0 })
	if s.Triggered != 1 || s.Queued != 1 || s.Dropped[syslog.Drop{Class: syslog.ClassChange, Reason: syslog.DropRate}] == 0 {
		t.Fatalf("after %d changes: %+v", r.sent, s)
	}
	if got := r.queued(); len(got) != 1 || got[ids["sw-9"]] != 1 {
		t.Fatalf("queued syslog jobs by device %v; want one of sw-9 (%d)", got, ids["sw-9"])
	}
}
