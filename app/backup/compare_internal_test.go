package backup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/db/snapstore"
	"backupd/internal/dbtest"
)

// compareFixture is an engine over a real store with one device whose
// versions the test records by hand.
type compareFixture struct {
	t      *testing.T
	ctx    context.Context
	store  *db.Store
	e      *Engine
	device int64
	at     time.Time
}

func newCompareFixture(t *testing.T) *compareFixture {
	t.Helper()
	ctx := context.Background()
	store := dbtest.Open(t)
	sealer, _ := secret.New(bytes.Repeat([]byte{1}, 32))
	d, err := store.CreateDevice(ctx, db.Device{Name: "r1", Host: "192.0.2.1", Port: 22, Platform: "cisco_ios",
		LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	e := New(store, sealer, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{})
	return &compareFixture{t: t, ctx: ctx, store: store, e: e, device: d.ID, at: time.Now().Add(-time.Hour)}
}

// record stores text as the device's newest good version.
func (f *compareFixture) record(text string) {
	f.t.Helper()
	hash, err := f.store.PutSnapshot(f.ctx, text)
	if err != nil {
		f.t.Fatal(err)
	}
	f.at = f.at.Add(time.Minute)
	if err := f.store.InsertBackup(f.ctx, db.Backup{ID: fmt.Sprint("b-", f.at.UnixNano()), DeviceID: f.device, StartedAt: f.at,
		FinishedAt: &f.at, Success: true, SnapshotHash: &hash, Trigger: queue.TriggerManual}); err != nil {
		f.t.Fatal(err)
	}
}

// compare asks the engine whether text is a change after the newest
// recorded version, as a backup on platform would.
func (f *compareFixture) compare(platform, text string) bool {
	f.t.Helper()
	text = Normalise(text)
	changed, first, err := f.e.changed(f.ctx, f.device, platform, snapstore.Hash(text), text)
	if err != nil || first {
		f.t.Fatalf("changed: %v (first %v)", err, first)
	}
	return changed
}

func (f *compareFixture) rules(rules ...db.NoiseRule) {
	f.t.Helper()
	if err := SaveNoiseRules(f.ctx, f.store, rules); err != nil {
		f.t.Fatal(err)
	}
}

func (f *compareFixture) counts() (hits, misses int) {
	f.e.compare.mu.Lock()
	defer f.e.compare.mu.Unlock()
	return f.e.compare.hits, f.e.compare.misses
}

const (
	v0 = "hostname r1\nclock 0\n"
	v1 = "hostname r1\nclock 1\n"
	v2 = "hostname r1\nclock 2\n"
	v3 = "hostname r2\nclock 3\n"
)

var clockIsNoise = db.NoiseRule{Pattern: `^clock `, Platform: "cisco_ios"}

// The next backup of a device compares with the remembered stripped form
// of its previous version, and answers as the full comparison does.
func TestCompareCacheAnswersLikeTheFullComparison(t *testing.T) {
	f := newCompareFixture(t)
	f.rules(clockIsNoise)
	f.record(v0)
	if f.compare("cisco_ios", v1) { // a miss: read v0
		t.Fatal("v1 after v0: only the noise line differs, want no change")
	}
	f.record(v1)
	if f.compare("cisco_ios", v2) {
		t.Fatal("v2 after v1: only the noise line differs, want no change")
	}
	f.record(v2)
	if !f.compare("cisco_ios", v3) {
		t.Fatal("v3 after v2: the hostname changed, want a change")
	}
	if hits, misses := f.counts(); hits != 2 || misses != 1 {
		t.Fatalf("cache hits %d, misses %d; want 2 and 1", hits, misses)
	}
}

// Noise rules changed since the previous version was compared: the
// remembered form was stripped by other rules and must not be used.
func TestCompareCacheMissesAfterNoiseRuleChange(t *testing.T) {
	f := newCompareFixture(t)
	f.record(v0)
	if !f.compare("cisco_ios", v1) { // remembered without the rule
		t.Fatal("v1 after v0 without noise rules: want a change")
	}
	f.record(v1)
	f.rules(clockIsNoise)
	if f.compare("cisco_ios", v2) {
		t.Fatal("v2 after v1 once the clock line is noise: want no change")
	}
	f.rules()
	f.record(v2)
	if !f.compare("cisco_ios", v3) || !f.compare("cisco_ios", v2+"clock 9\n") {
		t.Fatal("after the rule is removed, want changes")
	}
}

// The device's platform changed since the previous version was
// compared: its noise rules are others.
func TestCompareCacheMissesAfterPlatformChange(t *testing.T) {
	f := newCompareFixture(t)
	f.rules(clockIsNoise) // cisco_ios only
	f.record(v0)
	if !f.compare("juniper_junos", v1) { // remembered with Junos' rules
		t.Fatal("v1 after v0 on Junos, where the clock rule does not apply: want a change")
	}
	f.record(v1)
	if f.compare("cisco_ios", v2) {
		t.Fatal("v2 after v1 on IOS, where the clock line is noise: want no change")
	}
}

// A version compared but never recorded (its backup failed to store) is
// not the previous version of the next backup.
func TestCompareCacheMissesAnUnrecordedVersion(t *testing.T) {
	f := newCompareFixture(t)
	f.record(v0)
	if !f.compare("cisco_ios", v1) { // remembered, but not recorded
		t.Fatal("v1 after v0: want a change")
	}
	if !f.compare("cisco_ios", v1) {
		t.Fatal("v1 again after v0 (v1 never recorded): want a change")
	}
}
