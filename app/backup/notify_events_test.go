package backup_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"backupd/app/backup"
	"backupd/app/devsim"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
	"backupd/internal/dbtest"
)

// eventsOf returns the kinds of the events recorded for a device after
// outbox id since, and the facts of each, oldest first.
func eventsOf(t *testing.T, s *db.Store, deviceID int64, since int64) ([]string, []outbox.EventPayload) {
	t.Helper()
	rows, err := dbtest.Peek(t, s).Query(`SELECT kind, payload FROM outbox WHERE device_id = ? AND id > ? ORDER BY id`, deviceID, since)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var kinds []string
	var payloads []outbox.EventPayload
	for rows.Next() {
		var k, raw string
		if err := rows.Scan(&k, &raw); err != nil {
			t.Fatal(err)
		}
		var p outbox.EventPayload
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			t.Fatal(err)
		}
		kinds, payloads = append(kinds, k), append(payloads, p)
	}
	return kinds, payloads
}

func lastOutboxID(t *testing.T, s *db.Store) int64 {
	t.Helper()
	var id int64
	if err := dbtest.Peek(t, s).QueryRow(`SELECT COALESCE(MAX(id), 0) FROM outbox`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// The engine's backups of simulated devices over real SSH record the
// events their results cause: the first backup, nothing for noise, a
// change naming both versions, an unreachable device once, a changed host
// key.
func TestEngineRecordsNotificationEvents(t *testing.T) {
	e := newEngEnv(t)
	ctx := context.Background()
	ch, err := e.store.CreateNotificationChannel(ctx, db.NotificationChannel{Name: "hook", Type: db.ChannelWebhook, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.CreateNotificationRule(ctx, db.NotificationRule{Name: "everything", Enabled: true, Events: outbox.EventKinds,
		Scope: db.RuleScopeAll, ChannelIDs: []int64{ch.ID}}); err != nil {
		t.Fatal(err)
	}
	r1 := e.sim("r1", "cisco_ios", "ssh", devsim.Options{Seed: 21})
	off := e.device("r9", "cisco_ios", "ssh", engClosedPort(t))
	eng := e.engine(backup.Options{Workers: 2, MaxAttempts: 2})

	check := func(what string, id int64, since int64, want ...string) []outbox.EventPayload {
		t.Helper()
		got, payloads := eventsOf(t, e.store, id, since)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: device %d events %v, want %v", what, id, got, want)
		}
		return payloads
	}
	since := lastOutboxID(t, e.store)
	first := e.run(eng, r1, off)
	p := check("first run", r1, since, string(outbox.EventFirstBackup))
	if p[0].BackupID != *first[r1].BackupID || p[0].DeviceName != "r1" || p[0].Trigger != queue.TriggerManual {
		t.Fatalf("first backup event = %+v", p[0])
	}
	// The device that is off: unreachable at its first attempt, failed
	// when its last attempt failed, each once.
	p = check("first run", off, since, string(outbox.EventDeviceUnreachable), string(outbox.EventBackupFailed))
	if f := p[1].Failure; f == nil || f.Stage != "connect" || f.Consecutive != 1 || p[1].Trigger != queue.TriggerRetry {
		t.Fatalf("failure event = %+v", p[1])
	}

	since = lastOutboxID(t, e.store)
	e.run(eng, r1, off)
	check("noise only", r1, since)
	check("still off", off, since)

	since = lastOutboxID(t, e.store)
	e.sims[r1].Mutate(7)
	third := e.run(eng, r1)
	p = check("a real change", r1, since, string(outbox.EventConfigChanged))
	if p[0].BackupID != *third[r1].BackupID || p[0].PreviousBackupID == "" || p[0].PreviousBackupID == p[0].BackupID {
		t.Fatalf("change event names %q against %q", p[0].BackupID, p[0].PreviousBackupID)
	}

	since = lastOutboxID(t, e.store)
	if err := e.sims[r1].RotateHostKey(); err != nil {
		t.Fatal(err)
	}
	e.run(eng, r1)
	p = check("host key changed", r1, since, string(outbox.EventBackupFailed), string(outbox.EventHostKeyChanged))
	if p[0].Failure == nil || p[0].Failure.Stage != "host_key_changed" {
		t.Fatalf("host key failure = %+v", p[0].Failure)
	}
	if _, err := e.store.AcceptHostKey(ctx, r1); err != nil {
		t.Fatal(err)
	}
	since = lastOutboxID(t, e.store)
	e.run(eng, r1)
	check("after accepting the key", r1, since, string(outbox.EventBackupRecovered))

	// Events carry no secret.
	var payloads string
	dbtest.Peek(t, e.store).QueryRow(`SELECT group_concat(payload) FROM outbox`).Scan(&payloads)
	if payloads == "" {
		t.Fatal("no events recorded")
	}
	for _, secret := range []string{engPassword, engEnable} {
		if strings.Contains(payloads, secret) {
			t.Fatal("the outbox holds a device password")
		}
	}
}
