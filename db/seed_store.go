package db

import (
	"context"

	"backupd/db/seed"
)

// Seed fills the empty store with a synthetic inventory and a year of
// history (package seed), for demos, benchmarks and load tests.
func (s *Store) Seed(ctx context.Context, opt seed.Options) error { return seed.Fill(ctx, s.e, opt) }
