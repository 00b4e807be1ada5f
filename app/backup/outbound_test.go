package backup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/netguard"
	"backupd/db"
	"backupd/db/queue"
)

// A device on a link-local address is not connected to (the dial hook
// refuses it before the connect system call): its backup fails at once,
// not retried, saying why and how to allow it; the reachability check
// counts it unreachable without a probe. No packet leaves the machine.
func TestLinkLocalDeviceIsNotDialled(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	var ids []int64
	for _, host := range []string{"169.254.10.5", "fe80::1"} {
		d, err := e.store.CreateDevice(ctx, db.Device{Name: "ll-" + host, Host: host, Port: 22, Platform: "cisco_ios",
			LoginMethod: "ssh", CredentialID: &e.credID, Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	start := time.Now()
	jobs := e.run(e.engine(backup.Options{MaxAttempts: 3}), ids...)
	for _, id := range ids {
		j := jobs[id]
		if j.State != queue.JobFailed || j.Attempt != 1 {
			t.Fatalf("device %d: job %s after %d attempts (%s), want one failed attempt, not retried", id, j.State, j.Attempt, deref(j.Error))
		}
		if msg := deref(j.Error); !strings.Contains(msg, "link-local") || !strings.Contains(msg, "allow list") {
			t.Errorf("device %d: error %q does not say why and how to allow it", id, msg)
		}
		if d, err := e.store.GetDevice(ctx, id); err != nil || d.Status != db.StatusUnreachable {
			t.Errorf("device %d: status %s (%v), want unreachable", id, d.Status, err)
		}
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the refused backups took %s", took)
	}

	r := backup.NewReachability(e.store, nil, backup.ReachOptions{Timeout: 2 * time.Second})
	if up, down, err := r.CheckAll(ctx); err != nil || up != 0 || down != 2 {
		t.Fatalf("CheckAll = %d, %d, %v; want 0, 2", up, down, err)
	}

	// The allow list makes the address a device's like any other: the
	// target the engine builds then lets it through the dial hook.
	allow, err := netguard.ParseAllow([]string{"169.254.10.0/24"})
	if err != nil {
		t.Fatal(err)
	}
	if err := netguard.Save(ctx, e.store, allow); err != nil {
		t.Fatal(err)
	}
	tg, err := backup.DeviceTarget(ctx, e.store, e.sealer, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Control("tcp4", "169.254.10.5:22", nil); err != nil {
		t.Errorf("an allowed link-local device is refused: %v", err)
	}
	if err := tg.Control("tcp4", "169.254.169.254:22", nil); err == nil {
		t.Error("the metadata address passes with another link-local network allowed")
	}
}
