package db_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"backupd/db"
	"backupd/internal/dbtest"
)

// A duplicate name refused by its UNIQUE constraint is ErrNameExists on
// both engines (SQLite's "UNIQUE constraint failed", PostgreSQL's 23505),
// and another unique column's duplicate is not.
func TestDuplicateNameConstraintIsErrNameExists(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	insert := func(name string) error {
		return s.InTx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at)
				VALUES (?, '192.0.2.1', 22, 'cisco_ios', 'ssh', ?, ?)`, name, db.Now(), db.Now())
			return err
		})
	}
	if err := insert("dup-1"); err != nil {
		t.Fatal(err)
	}
	if err := insert("DUP-1"); !errors.Is(err, db.ErrNameExists) {
		t.Errorf("a device name taken (ignoring case): %v, want ErrNameExists", err)
	}
	if err := s.InTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO credentials (name, username, created_at, updated_at) VALUES ('c', 'u', ?, ?)`, db.Now(), db.Now())
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO credentials (name, username, created_at, updated_at) VALUES ('C', 'u', ?, ?)`, db.Now(), db.Now())
		return err
	}); !errors.Is(err, db.ErrNameExists) {
		t.Errorf("a credential name taken: %v, want ErrNameExists", err)
	}
	// A snapshot's hash is unique too, but it is no name.
	if err := s.InTx(ctx, func(tx *sql.Tx) error {
		for range 2 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO snapshots (hash, size, stored_size, data, created_at) VALUES ('h', 1, 1, ?, ?)`,
				[]byte("x"), db.Now()); err != nil {
				return err
			}
		}
		return nil
	}); err == nil || errors.Is(err, db.ErrNameExists) {
		t.Errorf("a duplicate snapshot hash: %v, want the database's own error", err)
	}
}

// Two PostgreSQL nodes creating the same device name at once: both find
// the name free, the second insert waits on the first's row and is then
// refused by the constraint, which the caller hears as ErrNameExists (the
// API's 409), not as a database error (a 500).
func TestCreateDeviceRaceAnswersNameExists(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("PostgreSQL only: SQLite has one writer at a time, so the check before the insert always sees the other's name")
	}
	s := openStore(t)
	other := dbtest.Reopen(t, s) // another node
	ctx := context.Background()
	dev := db.Device{Name: "race-1", Host: "192.0.2.1", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh", Encoding: "utf-8", Enabled: true}

	inserted, release := make(chan struct{}), make(chan struct{})
	holder := make(chan error, 1)
	go func() {
		holder <- other.InTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO devices (name, host, port, platform, login_method, created_at, updated_at)
				VALUES (?, '192.0.2.9', 22, 'cisco_ios', 'ssh', ?, ?)`, dev.Name, db.Now(), db.Now()); err != nil {
				close(inserted)
				return err
			}
			close(inserted)
			<-release
			return nil
		})
	}()
	<-inserted
	created := make(chan error, 1)
	go func() {
		_, err := s.CreateDevice(ctx, dev)
		created <- err
	}()
	// Wait (bounded) until the second insert is blocked on the first's row.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting int
		if err := s.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO devices%'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case err := <-created:
			close(release)
			t.Fatalf("CreateDevice returned before the other node committed: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			close(release)
			t.Fatal("the second insert never waited on the first")
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(release)
	if err := <-holder; err != nil {
		t.Fatal(err)
	}
	if err := <-created; !errors.Is(err, db.ErrNameExists) {
		t.Errorf("CreateDevice of a name another node took meanwhile: %v, want ErrNameExists", err)
	}
}
