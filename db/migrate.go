package db

import (
	"context"
	"database/sql"
	"fmt"
	"io"

	"backupd/db/engine"
	"backupd/db/snapstore"
)

// deltaMigration is the version that added snapshot deltas (base_id).
const deltaMigration = 17

// Migrate applies, rolls back one, or reports migrations on the database
// file at path; status lines go to out (which may be nil).
func Migrate(ctx context.Context, path string, dir engine.MigrateDirection, out io.Writer) error {
	return engine.MigrateSQLite(ctx, path, dir, out, func(conn *sql.DB, current int64) error {
		if current != deltaMigration {
			return nil
		}
		// Deltas cannot outlive the column that says what they are based
		// on: every one is written whole first.
		n, err := snapstore.ExpandAll(ctx, conn)
		if err == nil && out != nil && n > 0 {
			fmt.Fprintf(out, "expanded %d delta snapshots\n", n)
		}
		return err
	})
}
