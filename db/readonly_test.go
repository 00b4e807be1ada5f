package db_test

import (
	"context"
	"strings"
	"testing"

	"backupd/db"
	"backupd/internal/dbtest"
)

// PostgresEmpty tells a database no migration ran in from a store, and
// changes neither.
func TestPostgresEmpty(t *testing.T) {
	if !dbtest.Postgres() {
		t.Skip("PostgreSQL only")
	}
	ctx := context.Background()
	loc := dbtest.Location(t)
	if empty, err := db.PostgresEmpty(ctx, loc); err != nil || empty {
		t.Fatalf("a migrated store: empty %v, %v", empty, err)
	}
	s, err := dbtest.OpenAt(t, loc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Exec(ctx, `DROP TABLE goose_db_version`); err != nil {
		t.Fatal(err)
	}
	if empty, err := db.PostgresEmpty(ctx, loc); err != nil || !empty {
		t.Fatalf("no migration recorded: empty %v, %v", empty, err)
	}
	// A server that does not answer: an error naming the database, not
	// its password.
	_, err = db.PostgresEmpty(ctx, "postgres://u:secret-pw@127.0.0.1:1/backupd?connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), "secret-pw") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("an unreachable server: %v", err)
	}
}
