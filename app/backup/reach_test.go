package backup_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/db"
	"backupd/internal/dbtest"
)

// reachListener accepts and drops TCP connections on 127.0.0.1 until the
// test ends; it returns the port.
func reachListener(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// reachClosedPort is a port on 127.0.0.1 nothing listens on.
func reachClosedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

func reachDevice(t *testing.T, s *db.Store, name, host string, port int, enabled bool) int64 {
	t.Helper()
	d, err := s.CreateDevice(context.Background(), db.Device{Name: name, Host: host, Port: port, Platform: "cisco_ios",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: enabled})
	if err != nil {
		t.Fatal(err)
	}
	return d.ID
}

func reachStatus(t *testing.T, s *db.Store, id int64) db.Device {
	t.Helper()
	d, err := s.GetDevice(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestCheckAllMarksReachability(t *testing.T) {
	ctx := context.Background()
	store := schedOpenStore(t)
	open, closed := reachListener(t), reachClosedPort(t)
	up := reachDevice(t, store, "up", "127.0.0.1", open, true)
	down := reachDevice(t, store, "down", "127.0.0.1", closed, true)
	off := reachDevice(t, store, "off", "127.0.0.1", open, false)

	r := backup.NewReachability(store, nil, backup.ReachOptions{Timeout: 2 * time.Second})
	reachable, unreachable, err := r.CheckAll(ctx)
	if err != nil || reachable != 1 || unreachable != 1 {
		t.Fatalf("CheckAll = %d, %d, %v; want 1, 1, nil", reachable, unreachable, err)
	}
	for _, c := range []struct {
		id      int64
		status  string
		checked bool
	}{{up, db.StatusReachable, true}, {down, db.StatusUnreachable, true}, {off, db.StatusUnknown, false}} {
		d := reachStatus(t, store, c.id)
		if d.Status != c.status || (d.LastCheckedAt != nil) != c.checked {
			t.Errorf("%s: status %s, checked at %v; want %s, checked %v", d.Name, d.Status, d.LastCheckedAt, c.status, c.checked)
		}
	}
	// What GET /devices/unreachable lists.
	list, total, err := store.ListDevices(ctx, db.Scope{All: true}, db.DeviceFilter{Status: db.StatusUnreachable}, 10, 0)
	if err != nil || total != 1 || list[0].ID != down {
		t.Errorf("unreachable devices = %v, %d, %v; want only %d", list, total, err, down)
	}

	// A device that comes back is marked reachable again.
	if _, err := store.UpdateDevice(ctx, down, func(d *db.Device) error { d.Port = open; return nil }); err != nil {
		t.Fatal(err)
	}
	if reachable, unreachable, err := r.CheckAll(ctx); err != nil || reachable != 2 || unreachable != 0 {
		t.Fatalf("second CheckAll = %d, %d, %v; want 2, 0", reachable, unreachable, err)
	}
	if d := reachStatus(t, store, down); d.Status != db.StatusReachable {
		t.Errorf("recovered device status %s", d.Status)
	}
}

func TestCheckAllWalksEveryPage(t *testing.T) {
	store := schedOpenStore(t)
	open := reachListener(t)
	ids := schedAddDevices(t, store, "r", 1200, nil, true)
	if _, err := dbtest.Poke(t, store).ExecContext(context.Background(), `UPDATE devices SET port = ?`, open); err != nil {
		t.Fatal(err)
	}
	r := backup.NewReachability(store, nil, backup.ReachOptions{Timeout: 5 * time.Second, Concurrency: 8, PageSize: 100})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reachable, unreachable, err := r.CheckAll(ctx)
	if err != nil || reachable != 1200 || unreachable != 0 {
		t.Fatalf("CheckAll = %d, %d, %v; want 1200, 0", reachable, unreachable, err)
	}
	for _, id := range []int64{ids[0], ids[99], ids[100], ids[1199]} {
		if d := reachStatus(t, store, id); d.Status != db.StatusReachable {
			t.Errorf("device %d: %s", id, d.Status)
		}
	}
}

func TestCheckAllUnroutableAddressEndsInTime(t *testing.T) {
	store := schedOpenStore(t)
	// TEST-NET-1 (RFC 5737): never answers; either the connect times out
	// or the network says unreachable at once.
	id := reachDevice(t, store, "void", "192.0.2.1", 22, true)
	r := backup.NewReachability(store, nil, backup.ReachOptions{Timeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reachable, unreachable, err := r.CheckAll(ctx)
	if err != nil || reachable != 0 || unreachable != 1 {
		t.Fatalf("CheckAll = %d, %d, %v; want 0, 1, nil", reachable, unreachable, err)
	}
	if d := reachStatus(t, store, id); d.Status != db.StatusUnreachable {
		t.Errorf("status %s, want unreachable", d.Status)
	}
}

func TestCheckAllCancelledRecordsNothing(t *testing.T) {
	store := schedOpenStore(t)
	id := reachDevice(t, store, "down", "127.0.0.1", reachClosedPort(t), true)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := backup.NewReachability(store, nil, backup.ReachOptions{})
	if _, _, err := r.CheckAll(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("CheckAll on a cancelled context = %v, want context.Canceled", err)
	}
	if d := reachStatus(t, store, id); d.Status != db.StatusUnknown || d.LastCheckedAt != nil {
		t.Errorf("status %s checked %v after a cancelled check, want unknown and never", d.Status, d.LastCheckedAt)
	}
}

func TestReachabilityRunChecksAndStops(t *testing.T) {
	store := schedOpenStore(t)
	id := reachDevice(t, store, "up", "127.0.0.1", reachListener(t), true)
	r := backup.NewReachability(store, nil, backup.ReachOptions{Interval: time.Hour, Timeout: 2 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	// Run checks at once on start; wait for it, bounded.
	deadline := time.Now().Add(15 * time.Second)
	for reachStatus(t, store, id).Status != db.StatusReachable {
		if time.Now().After(deadline) {
			t.Fatal("Run did not check the device within 15 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
