package db_test

import (
	"context"

	"backupd/db"
)

// What the storage benchmarks (storage_bench_test.go) use of a store that
// keeps deltas: Repack (db repack) runs on what they wrote before they
// measure it, and the cold reads empty the cache of decoded texts first.
func init() {
	storageRepack = func(ctx context.Context, s *db.Store) error {
		_, err := s.Repack(ctx, nil)
		return err
	}
	storageResetCache = db.ResetTextCache
}
