package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/queue"
)

// The CLI's config commands and the demo find what they name through
// these lookups: a name as the column compares it (ASCII case folded),
// a missing one as ErrNotFound.
func TestLookupsByName(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	core := createGroup(t, s, "Core", nil)
	cred, err := s.CreateCredential(ctx, db.Credential{Name: "Lab Login", Username: "admin", Password: []byte("sealed-pw"), EnablePassword: []byte("sealed-en")})
	if err != nil {
		t.Fatal(err)
	}
	dev := insertDevice(t, s, "Edge-1", &core.ID, &cred.ID, nil)
	sched, err := s.CreateSchedule(ctx, db.Schedule{Name: "Nightly", Cron: "0 3 * * *", Timezone: "UTC", Target: "groups",
		TargetIDs: []int64{core.ID}, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}

	if d, err := s.DeviceByName(ctx, "edge-1"); err != nil || d.ID != dev || d.Name != "Edge-1" || d.GroupID == nil || *d.GroupID != core.ID {
		t.Errorf("DeviceByName(edge-1) = %+v, %v; want device %d as stored", d, err, dev)
	}
	if g, err := s.GroupByName(ctx, "CORE"); err != nil || g.ID != core.ID || g.Name != "Core" {
		t.Errorf("GroupByName(CORE) = %+v, %v; want group %d", g, err, core.ID)
	}
	if c, err := s.CredentialByName(ctx, "lab login"); err != nil || c.ID != cred.ID || string(c.Password) != "sealed-pw" || string(c.EnablePassword) != "sealed-en" {
		t.Errorf("CredentialByName(lab login) = %+v, %v; want credential %d with its sealed secrets", c, err, cred.ID)
	}
	if sc, err := s.ScheduleByName(ctx, "NIGHTLY"); err != nil || sc.ID != sched.ID || len(sc.TargetIDs) != 1 {
		t.Errorf("ScheduleByName(NIGHTLY) = %+v, %v; want schedule %d", sc, err, sched.ID)
	}

	for what, lookup := range map[string]func() error{
		"device":     func() error { _, err := s.DeviceByName(ctx, "edge-2"); return err },
		"group":      func() error { _, err := s.GroupByName(ctx, "Cor"); return err },
		"credential": func() error { _, err := s.CredentialByName(ctx, "lab"); return err },
		"schedule":   func() error { _, err := s.ScheduleByName(ctx, "Nightly "); return err },
		"device by a group's name": func() error {
			_, err := s.DeviceByName(ctx, "Core")
			return err
		},
	} {
		if err := lookup(); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("%s not there: %v, want ErrNotFound", what, err)
		}
	}
}

// VersionBeforeChange skips failed attempts and versions holding the same
// configuration, and never looks past the version it is given.
func TestVersionBeforeChange(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	dev := insertDevice(t, s, "r1", nil, nil, nil)
	other := insertDevice(t, s, "r2", nil, nil, nil)
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	add := func(device int64, id string, minute int, config string) db.Backup {
		t.Helper()
		at := start.Add(time.Duration(minute) * time.Minute)
		fin := at.Add(time.Second)
		b := db.Backup{ID: id, DeviceID: device, StartedAt: at, FinishedAt: &fin, Success: config != "", Trigger: queue.TriggerSchedule}
		if config == "" {
			msg := "timeout"
			b.ErrorMessage = &msg
		} else {
			hash, err := s.PutSnapshot(ctx, config)
			if err != nil {
				t.Fatal(err)
			}
			b.SnapshotHash = &hash
		}
		if err := s.InsertBackup(ctx, b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := add(dev, "a1", 0, "hostname r1\n! one\n")
	add(other, "x1", 1, "hostname r2\n! elsewhere\n") // another device's, newer
	add(dev, "a2", 2, "hostname r1\n! two\n")
	add(dev, "a3", 3, "")                             // failed
	same := add(dev, "a4", 4, "hostname r1\n! two\n") // unchanged
	later := add(dev, "a5", 5, "hostname r1\n! three\n")

	for _, c := range []struct {
		to   db.Backup
		want string
	}{
		{same, "a1"},  // a2 holds the same configuration, a3 failed
		{later, "a4"}, // the newest differing version before it
		{first, ""},   // one configuration only
	} {
		b, ok, err := s.VersionBeforeChange(ctx, c.to)
		if err != nil || ok != (c.want != "") || b.ID != c.want {
			t.Errorf("VersionBeforeChange(%s) = %q, %v, %v; want %q", c.to.ID, b.ID, ok, err, c.want)
		}
		if ok && (b.SnapshotHash == nil || b.DeviceID != dev || !b.Success) {
			t.Errorf("VersionBeforeChange(%s) = %+v; want a successful version of the device, whole", c.to.ID, b)
		}
	}
	if _, _, err := s.VersionBeforeChange(ctx, db.Backup{ID: "failed", DeviceID: dev, StartedAt: start}); err == nil {
		t.Error("VersionBeforeChange of an attempt without a configuration: no error")
	}
}
