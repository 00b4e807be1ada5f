package outbox_test

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"backupd/db"
	"backupd/db/engine"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// A worker's claim reads only the due and leased deliveries, never the
// sent history (which grows until pruned).
func TestClaimDeliveriesUsesPartialIndexes(t *testing.T) {
	s := dbtest.Open(t)
	for i, q := range outbox.ClaimPicks {
		if s.Postgres() {
			p := dbtest.ExplainPG(t, s, q, "2026-01-01T00:00:00.000", 10)
			want := []string{"deliveries_leased", "deliveries_due"}[i]
			if len(p.Indexes) != 1 || !p.Uses(want) || len(p.SeqScans) > 0 || p.Sorts > 0 {
				t.Errorf("claim query %d plan\n%s\nwant one search of %s", i, p.Text, want)
			}
			continue
		}
		plan := dbtest.PlanSQLite(t, s, q, "2026-01-01T00:00:00.000", 10)
		want := []string{"deliveries_leased", "deliveries_due"}[i]
		if len(plan) != 1 || !strings.Contains(plan[0], "INDEX "+want) {
			t.Errorf("claim query %d plan %q, want one search of %s", i, plan, want)
		}
	}
}

// An event appended in a transaction that rolls back leaves nothing to
// deliver; appended in one that commits, it is one delivery per target,
// claimed by channel then event, with its payload and diff flag as
// given. A permanent failure settles the delivery and its batch.
func TestAppendClaimAndSettle(t *testing.T) {
	s := dbtest.Open(t)
	ctx := context.Background()
	a, b := dbtest.Channel(t, s, "a"), dbtest.Channel(t, s, "b")
	e, err := engineOf(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	ob := outbox.New(e)
	at := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	appendIn := func(kind outbox.EventKind, commit bool, targets ...outbox.Target) {
		t.Helper()
		fail := errors.New("the cause rolled back")
		err := e.InTx(ctx, func(tx *sql.Tx) error {
			if err := outbox.Append(ctx, tx, e.Dialect, outbox.EventPayload{Kind: kind, At: at, DeviceName: "r1"}, targets); err != nil {
				return err
			}
			if !commit {
				return fail
			}
			return nil
		})
		if commit && err != nil || !commit && !errors.Is(err, fail) {
			t.Fatalf("append %s (commit %v): %v", kind, commit, err)
		}
	}
	appendIn(outbox.EventBackupFailed, false, outbox.Target{Channel: a})
	appendIn(outbox.EventConfigChanged, true, outbox.Target{Channel: b, Diff: true}, outbox.Target{Channel: a})
	appendIn(outbox.EventBackupRecovered, true, outbox.Target{Channel: a})

	got, err := ob.ClaimDeliveries(ctx, time.Now(), 10, "worker")
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		channel int64
		kind    outbox.EventKind
		diff    bool
	}
	var order []seen
	for _, d := range got {
		order = append(order, seen{d.ChannelID, d.Event.Kind, d.IncludeDiff})
		if d.Event.Payload.DeviceName != "r1" || !d.Event.CreatedAt.Equal(at) || d.State != outbox.DeliverySending || d.Attempts != 1 {
			t.Errorf("delivery %+v: payload, time or lease not as appended", d)
		}
	}
	want := []seen{{a, outbox.EventConfigChanged, false}, {a, outbox.EventBackupRecovered, false}, {b, outbox.EventConfigChanged, true}}
	if !slices.Equal(order, want) {
		t.Fatalf("claimed %+v, want %+v (the rolled-back event left out)", order, want)
	}
	ids := []int64{got[0].ID, got[1].ID}
	batch, err := ob.CreateDeliveryBatch(ctx, "worker", a, "key-1", []byte(`[{"kind":"x"}]`), ids, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ob.CreateDeliveryBatch(ctx, "other", a, "key-2", []byte(`[]`), ids, time.Now()); !errors.Is(err, outbox.ErrNotLeased) {
		t.Fatalf("a batch of deliveries another worker holds = %v, want ErrNotLeased", err)
	}
	gaveUp, err := ob.MarkFailed(ctx, "worker", ids, outbox.DeliveryFailure{Status: "410", Error: "gone", At: time.Now(),
		RetryAt: time.Now().Add(time.Minute), Permanent: true})
	if err != nil || !slices.Equal(gaveUp, ids) {
		t.Fatalf("MarkFailed = %v, %v; want both given up", gaveUp, err)
	}
	if bt, err := ob.GetDeliveryBatch(ctx, batch); err != nil || bt.Events != nil {
		t.Fatalf("settled batch = %+v, %v; want its events dropped", bt, err)
	}
	if again, err := ob.ClaimDeliveries(ctx, time.Now(), 10, "worker-2"); err != nil || len(again) != 0 {
		t.Fatalf("claimed again %d, %v; want nothing (two given up, one still leased)", len(again), err)
	}
	// Once its lease runs out, the one left goes to another worker.
	again, err := ob.ClaimDeliveries(ctx, time.Now().Add(outbox.DeliveryLease+time.Second), 10, "worker-2")
	if err != nil || len(again) != 1 || again[0].ChannelID != b || again[0].Attempts != 2 {
		t.Fatalf("after the lease ran out: %+v, %v; want channel b's delivery, second attempt", again, err)
	}
}

// engineOf opens a second engine on s's database.
func engineOf(s *db.Store) (*engine.DB, error) {
	if s.Postgres() {
		return engine.OpenPostgres(context.Background(), s.Location())
	}
	return engine.OpenSQLite(s.Path())
}
