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
	"backupd/internal/dbtest"
)

// PostgreSQL's deadlock and serialization failures are the ones worth a
// second run, however wrapped; other errors are not.
func TestRetryableErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&pq.Error{Code: "40P01"}, true},
		{&pq.Error{Code: "40001"}, true},
		{fmt.Errorf("finish job 7: %w", &pq.Error{Code: "40P01"}), true},
		{&pq.Error{Code: "23505"}, false},
		{&pq.Error{Code: "57014"}, false}, // query cancelled
		{errors.New("40001"), false},
		{context.DeadlineExceeded, false},
		{nil, false},
	} {
		if got := db.Retryable(c.err); got != c.want {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

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
	if !db.Retryable(err) {
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
	retriesBefore := db.TxRetries()

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
	if got := db.TxRetries() - retriesBefore; got < 1 {
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
