package backup_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"backupd/app/backup"
	"backupd/app/collect"
	"backupd/app/devsim"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/outbox"
	"backupd/db/queue"
	"backupd/internal/dbtest"
	"backupd/internal/testkit"
)

// captureSide is one store with one simulated device: either backed up by
// the engine in this process, or collected "elsewhere" (as a remote
// collector does) and handed to Engine.RecordCapture.
type captureSide struct {
	store  *db.Store
	sealer *secret.Sealer
	eng    *backup.Engine
	credID int64
	dev    int64
	sim    *devsim.Device
	addr   string
}

func newCaptureSide(t *testing.T, clock func() time.Time) *captureSide {
	t.Helper()
	ctx := context.Background()
	store := dbtest.Open(t)
	sealer, err := secret.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	cred, err := store.CreateCredential(ctx, db.Credential{Name: "lab", Username: engUser,
		Password:       sealer.Seal(engPassword, secret.PurposePassword),
		EnablePassword: sealer.Seal(engEnable, secret.PurposeEnablePassword)})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := store.CreateNotificationChannel(ctx, db.NotificationChannel{Name: "hook", Type: db.ChannelWebhook, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.CreateNotificationRule(ctx, db.NotificationRule{Name: "everything", Enabled: true, Events: outbox.EventKinds,
		Scope: db.RuleScopeAll, ChannelIDs: []int64{ch.ID}}); err != nil {
		t.Fatal(err)
	}
	// The same seed and clock on both sides: the device prints the same
	// bytes, volatile lines included, show after show.
	sim, err := devsim.NewDevice(devsim.Options{Platform: "cisco_ios", Hostname: "r1", Username: engUser,
		Password: engPassword, EnablePassword: engEnable, SSHAddr: "127.0.0.1:0", Seed: 33, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	s := &captureSide{store: store, sealer: sealer, credID: cred.ID, sim: sim, addr: sim.SSHAddr()}
	_, port, _ := strings.Cut(s.addr, ":")
	var p int
	fmt.Sscan(port, &p)
	d, err := store.CreateDevice(ctx, db.Device{Name: "r1", Host: "127.0.0.1", Port: p, Platform: "cisco_ios",
		LoginMethod: "ssh", CredentialID: &cred.ID, Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	s.dev = d.ID
	s.eng = backup.New(store, sealer, slog.New(slog.NewTextHandler(&testkit.LockedBuffer{}, nil)),
		backup.Options{Workers: 1, MaxAttempts: 2, RetryBackoff: 50 * time.Millisecond, Timeouts: captureTimeouts})
	return s
}

var captureTimeouts = collect.Timeouts{Connect: 3 * time.Second, Login: 5 * time.Second, Command: 5 * time.Second, Job: 20 * time.Second}

// local backs the device up with the engine, as the server does for its
// own zone.
func (s *captureSide) local(t *testing.T) queue.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ids, err := s.eng.Enqueue(ctx, []int64{s.dev}, queue.TriggerManual)
	if err != nil {
		t.Fatal(err)
	}
	var job queue.Job
	if err := s.eng.RunJobs(ctx, ids, func(j queue.Job) { job = j }); err != nil {
		t.Fatal(err)
	}
	return job
}

// remote claims the job as a collector's lease would, collects from the
// device outside the engine and hands the capture to RecordCapture.
func (s *captureSide) remote(t *testing.T) queue.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ids, err := s.store.EnqueueJobs(ctx, []queue.JobRequest{{DeviceID: s.dev, Trigger: queue.TriggerManual, NotBefore: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := s.store.ClaimJobs(ctx, "collector-under-test", 1, ids)
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %v, %d claims", err, len(claims))
	}
	target, err := backup.DeviceTarget(ctx, s.store, s.sealer, s.dev)
	if err != nil {
		t.Fatal(err)
	}
	target.Timeouts = captureTimeouts
	began := time.Now()
	res, err := collect.Collect(ctx, target)
	if _, err := s.eng.RecordCapture(ctx, claims[0], backup.CaptureOf(res, err), time.Since(began)); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.store.GetJobs(ctx, ids)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("job: %v, %d", err, len(jobs))
	}
	return jobs[0]
}

func (s *captureSide) setPassword(t *testing.T, pw string) {
	t.Helper()
	if _, err := s.store.UpdateCredential(context.Background(), s.credID, func(c *db.Credential) error {
		c.Password = s.sealer.Seal(pw, secret.PurposePassword)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// captureFacts is what an attempt left in the store, with what differs
// between two stores by construction (ids, times, the simulator's port)
// taken out.
type captureFacts struct {
	JobState, JobError string
	Success            bool
	Error              string
	Hash, Text         string
	Changed, First     bool
	Bytes              int64
	Trigger            string
	Status             string
	LastBackupSuccess  bool
	PinnedKey          string
	Events             []string
}

func (s *captureSide) facts(t *testing.T, j queue.Job, since int64) captureFacts {
	t.Helper()
	ctx := context.Background()
	unport := func(v string) string { return strings.ReplaceAll(v, s.addr, "ADDR") }
	b, err := s.store.GetBackup(ctx, *j.BackupID)
	if err != nil {
		t.Fatal(err)
	}
	f := captureFacts{JobState: j.State, Success: b.Success, Changed: b.Changed, First: b.First, Trigger: b.Trigger}
	if j.Error != nil {
		f.JobError = unport(*j.Error)
	}
	if b.ErrorMessage != nil {
		f.Error = unport(*b.ErrorMessage)
	}
	if b.Bytes != nil {
		f.Bytes = *b.Bytes
	}
	if b.SnapshotHash != nil {
		f.Hash = *b.SnapshotHash
		if f.Text, err = s.store.SnapshotText(ctx, f.Hash); err != nil {
			t.Fatal(err)
		}
	}
	d, err := s.store.GetDevice(ctx, s.dev)
	if err != nil {
		t.Fatal(err)
	}
	f.Status = d.Status
	f.LastBackupSuccess = d.LastBackupSuccess != nil && *d.LastBackupSuccess
	pinned, _, err := s.store.HostKeys(ctx, s.dev)
	if err != nil {
		t.Fatal(err)
	}
	f.PinnedKey = fmt.Sprintf("%x", pinned)
	kinds, payloads := eventsOf(t, s.store, s.dev, since)
	for i, p := range payloads {
		e := fmt.Sprintf("%s trigger=%s device=%s/%s/%s backup=%t previous=%t", kinds[i], p.Trigger, p.DeviceName,
			p.DeviceHost, p.DevicePlatform, p.BackupID == *j.BackupID, p.PreviousBackupID != "")
		if p.Failure != nil {
			e += fmt.Sprintf(" failure=%s/%s/%d", p.Failure.Stage, unport(p.Failure.Reason), p.Failure.Consecutive)
		}
		f.Events = append(f.Events, e)
	}
	return f
}

// A device's capture recorded through RecordCapture (as a remote
// collector's upload is) leaves exactly what the engine's own backup of
// the same device leaves: the same snapshot bytes, change and first
// flags, error, device status, pinned host key and notification events,
// through a first backup, noise, a real change, a failure and the
// recovery after it.
func TestRecordCaptureMatchesLocalBackup(t *testing.T) {
	start := time.Date(2026, 3, 1, 2, 0, 0, 0, time.UTC)
	clock := func() time.Time { return start }
	local, remote := newCaptureSide(t, clock), newCaptureSide(t, clock)
	steps := []struct {
		name   string
		before func(s *captureSide)
		check  func(f captureFacts) string
	}{
		{"first backup", nil, func(f captureFacts) string {
			if !f.Success || !f.First || f.Text == "" || f.PinnedKey == "" {
				return "want a first good backup with its host key pinned"
			}
			return ""
		}},
		{"noise only", nil, func(f captureFacts) string {
			if !f.Success || f.Changed || f.First {
				return "want an unchanged backup"
			}
			return ""
		}},
		{"changed", func(s *captureSide) { s.sim.Mutate(7) }, func(f captureFacts) string {
			if !f.Success || !f.Changed {
				return "want a changed backup"
			}
			return ""
		}},
		{"wrong password", func(s *captureSide) { s.setPassword(t, "not-the-password") }, func(f captureFacts) string {
			if f.Success || f.JobState != queue.JobFailed || !strings.Contains(f.Error, "authentication failed") {
				return "want a failed backup for authentication"
			}
			return ""
		}},
		{"recovered", func(s *captureSide) { s.setPassword(t, engPassword) }, func(f captureFacts) string {
			if !f.Success || f.Changed {
				return "want a good, unchanged backup"
			}
			return ""
		}},
	}
	for _, step := range steps {
		var got [2]captureFacts
		for i, side := range []*captureSide{local, remote} {
			if step.before != nil {
				step.before(side)
			}
			since := lastOutboxID(t, side.store)
			var j queue.Job
			if i == 0 {
				j = side.local(t)
			} else {
				j = side.remote(t)
			}
			got[i] = side.facts(t, j, since)
		}
		if msg := step.check(got[0]); msg != "" {
			t.Fatalf("%s: the engine's own backup: %s; got %+v", step.name, msg, got[0])
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Fatalf("%s: the recorded capture differs from the engine's own backup:\nengine:  %+v\ncapture: %+v", step.name, got[0], got[1])
		}
	}
}
