package backup_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/db"
	"backupd/internal/dbtest"
)

// reachBlackhole returns a port on 127.0.0.1 where connects hang: a
// listener with a backlog of zero whose only queue slot is taken, so
// Linux drops further handshakes, as a firewall that drops packets would.
func reachBlackhole(t *testing.T) int {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := sa.(*syscall.SockaddrInet4).Port
	filler, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { filler.Close() })
	// Make sure it does hang, or the tests below prove nothing.
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 200*time.Millisecond); err == nil {
		c.Close()
		t.Skip("this kernel accepts beyond the backlog; no local blackhole")
	}
	return port
}

// reachWithin runs CheckAll and fails the test if it has not returned
// within limit.
func reachWithin(t *testing.T, r *backup.Reachability, ctx context.Context, limit time.Duration) (int, int, error) {
	t.Helper()
	type result struct {
		up, down int
		err      error
	}
	done := make(chan result, 1)
	go func() {
		up, down, err := r.CheckAll(ctx)
		done <- result{up, down, err}
	}()
	select {
	case res := <-done:
		return res.up, res.down, res.err
	case <-time.After(limit):
		t.Fatalf("CheckAll still running after %v", limit)
		return 0, 0, nil
	}
}

func TestCheckAllBlackholedAddressTimesOut(t *testing.T) {
	store := schedOpenStore(t)
	port := reachBlackhole(t)
	ids := schedAddDevices(t, store, "void", 4, nil, true)
	if _, err := dbtest.Poke(t, store).ExecContext(context.Background(), `UPDATE devices SET port = ?`, port); err != nil {
		t.Fatal(err)
	}
	r := backup.NewReachability(store, nil, backup.ReachOptions{Timeout: 300 * time.Millisecond, Concurrency: 2})
	up, down, err := reachWithin(t, r, context.Background(), 15*time.Second)
	if err != nil || up != 0 || down != 4 {
		t.Fatalf("CheckAll = %d, %d, %v; want 0, 4, nil", up, down, err)
	}
	for _, id := range ids {
		if d := reachStatus(t, store, id); d.Status != db.StatusUnreachable {
			t.Errorf("device %d: %s, want unreachable", id, d.Status)
		}
	}
}

func TestCheckAllShutdownMidCheckRecordsNothing(t *testing.T) {
	store := schedOpenStore(t)
	id := reachDevice(t, store, "void", "127.0.0.1", reachBlackhole(t), true)
	// The connect would wait a minute; the shutdown comes first.
	r := backup.NewReachability(store, nil, backup.ReachOptions{Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, _, err := reachWithin(t, r, ctx, 15*time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("CheckAll = %v, want the context's error", err)
	}
	if d := reachStatus(t, store, id); d.Status != db.StatusUnknown || d.LastCheckedAt != nil {
		t.Errorf("status %s checked %v, want unknown and never: a shutdown is not an unreachable device", d.Status, d.LastCheckedAt)
	}
}
