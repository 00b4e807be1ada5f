package db_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lib/pq"

	"backupd/db"
	"backupd/db/engine"
	"backupd/db/outbox"
	"backupd/internal/dbtest"
)

// On PostgreSQL InTx runs a transaction the server aborted again, at most
// three times in all, and then returns the error; on SQLite (one writer,
// no such aborts) it never runs one again.
func TestInTxRetryIsBounded(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	var runs int
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		runs++
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ('retry_probe', '1', ?)`, db.Now()); err != nil {
			return err
		}
		return fmt.Errorf("wrapped: %w", &pq.Error{Code: "40001", Message: "could not serialize access"})
	})
	if !engine.Retryable(err) {
		t.Fatalf("InTx returned %v, want the serialization failure", err)
	}
	want := 1
	if s.Postgres() {
		want = 3
	}
	if runs != want {
		t.Errorf("fn ran %d times, want %d", runs, want)
	}
	// Every run was rolled back (a run that kept its row would make the
	// next one's INSERT fail on the key).
	var n int
	if err := s.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM settings WHERE key = 'retry_probe'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d probe rows after rolled-back runs, want 0", n)
	}
	// Another error is not retried on either engine.
	runs = 0
	refused := errors.New("refused")
	if err := s.InTx(ctx, func(*sql.Tx) error { runs++; return refused }); !errors.Is(err, refused) || runs != 1 {
		t.Errorf("a plain error: %v after %d runs, want refused after 1", err, runs)
	}
}

// Two nodes' transactions that take the same two device rows in opposite
// order deadlock on PostgreSQL, which aborts one of them: InTx runs that
// one again, and both changes land, once each.
func TestInTxRetriesDeadlock(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("PostgreSQL only: SQLite has one writer, so two transactions never wait on each other's rows")
	}
	s := openStore(t)
	other := dbtest.Reopen(t, s) // another node
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ids [2]int64
	for i := range ids {
		d, err := s.CreateDevice(ctx, db.Device{Name: fmt.Sprintf("dl-%d", i), Host: "192.0.2.1", Port: 22,
			Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = d.ID
	}
	retriesBefore := engine.TxRetries()

	// Each takes its first row, says so, and takes its second only once
	// the other holds its first: a deadlock on the first run. A second
	// run waits for no one but the lock.
	held := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	var runs [2]atomic.Int32
	bump := func(tx *sql.Tx, id int64) error {
		_, err := tx.ExecContext(ctx, `UPDATE devices SET port = port + 1 WHERE id = ?`, id)
		return err
	}
	swap := func(me int, store *db.Store) error {
		first, second := ids[me], ids[1-me]
		return store.InTx(ctx, func(tx *sql.Tx) error {
			n := runs[me].Add(1)
			if err := bump(tx, first); err != nil {
				return err
			}
			if n == 1 {
				close(held[me])
				select {
				case <-held[1-me]:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return bump(tx, second)
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- swap(0, s) }()
	go func() { errs <- swap(1, other) }()
	for range 2 {
		select {
		case err := <-errs:
			if err != nil {
				t.Errorf("a transaction of the deadlock failed: %v", err)
			}
		case <-ctx.Done():
			t.Fatal("the transactions did not end within a minute")
		}
	}
	if total := runs[0].Load() + runs[1].Load(); total != 3 {
		t.Errorf("the two transactions ran %d times in all, want 3 (the deadlock's victim once more)", total)
	}
	if got := engine.TxRetries() - retriesBefore; got < 1 {
		t.Errorf("InTx counted %d retries, want at least 1", got)
	}
	for _, id := range ids {
		var port int
		if err := s.Reader().QueryRowContext(ctx, `SELECT port FROM devices WHERE id = ?`, id).Scan(&port); err != nil {
			t.Fatal(err)
		}
		if port != 24 {
			t.Errorf("device %d: port %d, want 24 (22 and both transactions' +1)", id, port)
		}
	}
}

// abortOnceOn makes PostgreSQL abort, with a serialization failure, the
// first transaction that writes a row of table (a sequence counts: it is
// not rolled back with the transaction), as a conflict with another node
// would.
func abortOnceOn(t *testing.T, s *db.Store, table string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{`CREATE SEQUENCE test_abort_` + table,
		`CREATE FUNCTION test_abort_` + table + `() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN
				IF nextval('test_abort_` + table + `') = 1 THEN
					RAISE EXCEPTION 'test: could not serialize access' USING ERRCODE = '40001';
				END IF;
				RETURN NEW;
			END $$`,
		`CREATE TRIGGER test_abort_` + table + ` BEFORE INSERT OR UPDATE ON ` + table + `
			FOR EACH ROW EXECUTE FUNCTION test_abort_` + table + `()`} {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// A transaction run again hands out what its last run did, not the sum
// of its runs: the stale events counted, a setting's value edited.
func TestRetriedTransactionCountsOnce(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("PostgreSQL only: SQLite never aborts a transaction for a conflict, so none is run again")
	}
	s := openStore(t)
	ctx := context.Background()
	insertDevice(t, s, "r1", nil, nil, nil)
	ch := dbtest.Channel(t, s, "hook")
	mkRule(t, s, db.NotificationRule{Name: "stale", Events: []outbox.EventKind{outbox.EventBackupStale}, ChannelIDs: []int64{ch}})
	abortOnceOn(t, s, "notification_device_state")
	before := engine.TxRetries()
	if n, err := s.RecordStaleEvents(ctx, time.Now().Add(49*time.Hour), 48*time.Hour); err != nil || n != 1 {
		t.Errorf("stale events of one device, recorded on the second run: %d, %v; want 1", n, err)
	}
	if got := countRows(t, s, "outbox"); got != 1 {
		t.Errorf("%d events in the outbox, want 1", got)
	}

	abortOnceOn(t, s, "settings")
	var list []string
	err := s.UpdateSetting(ctx, "test_list", &list, func(found bool) error {
		list = append(list, "added")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	if found, err := s.GetSetting(ctx, "test_list", &stored); err != nil || !found || len(stored) != 1 {
		t.Errorf("the setting after a run again: %v (found %v, %v), want one entry", stored, found, err)
	}
	if got := engine.TxRetries() - before; got < 2 {
		t.Errorf("%d transactions run again, want 2", got)
	}
}
