package db_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"backupd/db"
	"backupd/internal/dbtest"
)

func TestReadyOnACurrentWritableStore(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready on a fresh store: %v", err)
	}
	// The probe's write is rolled back.
	var n int
	if err := s.Reader().QueryRow(`SELECT COUNT(*) FROM settings WHERE key = 'readiness_probe'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("probe row left behind: n=%d err=%v", n, err)
	}
	// A schema behind the binary is not ready.
	if _, err := s.Exec(ctx, `UPDATE goose_db_version SET is_applied = FALSE WHERE version_id = (SELECT MAX(version_id) FROM goose_db_version)`); err != nil {
		t.Fatal(err)
	}
	if err := s.Ready(ctx); err == nil || !strings.Contains(err.Error(), "restart backupd") {
		t.Fatalf("Ready with a stale schema = %v, want a schema error", err)
	}
}

func TestBackupToMakesAnOpenableCopyAndNeverOverwrites(t *testing.T) {
	dbtest.SQLiteOnly(t, "VACUUM INTO copies the SQLite file; a PostgreSQL store refuses (TestBackupToOnPostgresNamesPgDump)")
	s := openStore(t)
	ctx := context.Background()
	g, err := s.CreateGroup(ctx, "Copied", nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dst := filepath.Join(dir, db.FileName)
	if err := s.BackupTo(ctx, dst); err != nil {
		t.Fatal(err)
	}
	if err := s.BackupTo(ctx, dst); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("second copy onto the same file = %v, want a refusal", err)
	}
	st, err := os.Stat(dst)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("copy mode %v err %v, want 0600", st.Mode().Perm(), err)
	}
	copied, err := db.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	got, err := copied.GetGroup(ctx, g.ID)
	if err != nil || got.Name != "Copied" {
		t.Fatalf("group in the copy: %+v, %v", got, err)
	}
	if problems, err := copied.Check(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("Check on the copy: %v %v", problems, err)
	}
}

// A PostgreSQL store is copied with pg_dump: BackupTo says so and
// writes nothing.
func TestBackupToOnPostgresNamesPgDump(t *testing.T) {
	s := openStore(t)
	if !s.Postgres() {
		t.Skip("PostgreSQL only: a SQLite store copies itself (TestBackupToMakesAnOpenableCopyAndNeverOverwrites)")
	}
	dst := filepath.Join(t.TempDir(), db.FileName)
	err := s.BackupTo(context.Background(), dst)
	if !errors.Is(err, db.ErrBackupUsePgDump) || !strings.Contains(err.Error(), "pg_dump") {
		t.Fatalf("BackupTo = %v, want ErrBackupUsePgDump", err)
	}
	if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("BackupTo left %s: %v", dst, err)
	}
}

// Vacuum runs on either engine, and the store keeps working after it;
// SizeBytes is the database's size.
func TestVacuumAndSize(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	g, err := s.CreateGroup(ctx, "kept", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Vacuum(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetGroup(ctx, g.ID); err != nil || got.Name != "kept" {
		t.Fatalf("group after Vacuum: %+v, %v", got, err)
	}
	if n := s.SizeBytes(); n < 4096 {
		t.Fatalf("SizeBytes = %d, want the database's size", n)
	}
}

func TestCheckReportsABrokenReference(t *testing.T) {
	s := openStore(t)
	ctx := context.Background()
	if problems, err := s.Check(ctx); err != nil || len(problems) != 0 {
		t.Fatalf("Check on a fresh store: %v %v", problems, err)
	}
	// Foreign keys are enforced per connection; one that turns them off
	// (the writer pool has exactly one) can leave a dangling reference,
	// which Check must find. On PostgreSQL a superuser's session can do
	// the same (the foreign keys are triggers, which replica mode skips).
	off, on := `PRAGMA foreign_keys = OFF`, `PRAGMA foreign_keys = ON`
	if s.Postgres() {
		off, on = `SET session_replication_role = replica`, `SET session_replication_role = DEFAULT`
	}
	if _, err := s.Exec(ctx, off); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `INSERT INTO devices (name, host, port, platform, login_method, group_id, encoding, enabled, status, created_at, updated_at)
		VALUES ('orphan', '192.0.2.9', 22, 'cisco_ios', 'ssh', 999, 'utf-8', 1, 'unknown', '2026-01-01T00:00:00', '2026-01-01T00:00:00')`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, on); err != nil {
		t.Fatal(err)
	}
	problems, err := s.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "devices") {
		t.Fatalf("problems = %v, want the dangling device", problems)
	}
}
