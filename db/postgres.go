package db

import (
	"context"

	"backupd/db/engine"
)

// OpenPostgres opens the PostgreSQL database at dbURL, bringing its
// schema up to date first. Several backupd nodes may open the same one.
func OpenPostgres(ctx context.Context, dbURL string) (*Store, error) {
	if err := engine.MigratePostgres(ctx, dbURL, engine.MigrateUp, nil); err != nil {
		return nil, err
	}
	e, err := engine.OpenPostgres(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	return newStore(e), nil
}
