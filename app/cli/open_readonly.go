package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"backupd/app/config"
	"backupd/app/platforms"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/engine"
)

// Commands that only look — a listing, a dry run — open the store with
// openReadOnly instead of openData: nothing is created, migrated or
// bootstrapped, so pointing one at a mistyped --data, or trying it
// before the first start, leaves no database, secret.key or admin user
// behind (issue 24).

// errNoStore is the data directory, or the PostgreSQL database, holding
// no backupd store yet.
var errNoStore = errors.New("no backupd store yet")

// openReadOnly opens the store cfg names for reading only (see
// db.OpenReadOnly and db.OpenPostgresReadOnly) and loads its custom
// platforms. Where there is no store yet the error wraps errNoStore; a
// store whose schema is not this binary's is refused, not migrated.
func openReadOnly(ctx context.Context, cfg *config.Config, stderr io.Writer) (*db.Store, error) {
	if err := cfg.ValidateStore(); err != nil {
		return nil, err
	}
	var store *db.Store
	if cfg.Postgres() {
		empty, err := db.PostgresEmpty(ctx, cfg.DB)
		if err != nil {
			return nil, err
		}
		if empty {
			return nil, fmt.Errorf("%w (database %s has no backupd schema)", errNoStore, engine.RedactURL(cfg.DB))
		}
		if store, err = db.OpenPostgresReadOnly(ctx, cfg.DB); err != nil {
			return nil, fmt.Errorf("%w (database %s)", err, engine.RedactURL(cfg.DB))
		}
		if err := checkNoUnfinishedCopy(ctx, store); err != nil {
			store.Close()
			return nil, err
		}
	} else {
		if _, err := os.Stat(filepath.Join(cfg.DataDir, db.FileName)); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w (no %s in %s)", errNoStore, db.FileName, cfg.DataDir)
		}
		var err error
		if store, err = db.OpenReadOnly(ctx, cfg.DataDir); err != nil {
			return nil, err
		}
	}
	if err := platforms.LoadStore(ctx, store); err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
	}
	return store, nil
}

// openDryRun opens what a dry run plans against, and the sealer that
// opens the logins stored there, writing nothing where cfg points: the
// existing store read-only, or, when there is none yet, an empty store
// in a temporary directory (what the first real import would meet) that
// done removes. done is always to be called.
func openDryRun(ctx context.Context, cfg *config.Config, stderr io.Writer) (store *db.Store, sealer *secret.Sealer, done func(), err error) {
	store, err = openReadOnly(ctx, cfg, stderr)
	if errors.Is(err, errNoStore) {
		return emptyDryRunStore(ctx, err, stderr)
	}
	if err != nil {
		return nil, nil, func() {}, err
	}
	done = func() { store.Close() }
	if sealer, err = dryRunSealer(ctx, store, cfg); err != nil {
		done()
		return nil, nil, func() {}, err
	}
	return store, sealer, done, nil
}

// emptyDryRunStore is a fresh store in a temporary directory with a key
// that is never written: nothing is sealed in a dry run.
func emptyDryRunStore(ctx context.Context, why error, stderr io.Writer) (*db.Store, *secret.Sealer, func(), error) {
	dir, err := os.MkdirTemp("", "backupd-dry-run-")
	if err != nil {
		return nil, nil, func() {}, fmt.Errorf("an empty store to plan against: %w", err)
	}
	store, err := db.Open(ctx, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, func() {}, fmt.Errorf("an empty store to plan against: %w", err)
	}
	done := func() {
		store.Close()
		os.RemoveAll(dir)
	}
	sealer, err := ephemeralSealer()
	if err != nil {
		done()
		return nil, nil, func() {}, err
	}
	fmt.Fprintf(stderr, "note: %v: planned as the first import into a new store would be; nothing was created\n", why)
	return store, sealer, done, nil
}

// dryRunSealer loads the data directory's key without creating it. A
// missing key is only an error when the store holds logins sealed with
// it: without them nothing is opened, and a key made up for the dry run
// serves.
func dryRunSealer(ctx context.Context, store *db.Store, cfg *config.Config) (*secret.Sealer, error) {
	sealer, err := secret.Load(cfg.DataDir)
	if errors.Is(err, fs.ErrNotExist) {
		_, n, lerr := store.ListCredentials(ctx, 1, 0)
		if lerr != nil {
			return nil, lerr
		}
		if n > 0 {
			return nil, fmt.Errorf("%w: the store holds %d credential(s) sealed with the key this data directory lacks; point --data at the directory holding %s, or set %s",
				err, n, secret.KeyFile, secret.EnvKey)
		}
		return ephemeralSealer()
	}
	if err != nil {
		return nil, err
	}
	if store.Postgres() {
		var have string
		found, err := store.GetSetting(ctx, db.SettingKeyFingerprint, &have)
		if err != nil {
			return nil, err
		}
		if found {
			if err := sameKey(have, sealer.Fingerprint(), cfg.DataDir); err != nil {
				return nil, err
			}
		}
	}
	return sealer, nil
}

// ephemeralSealer seals with a random key held in memory only.
func ephemeralSealer() (*secret.Sealer, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	return secret.New(key)
}
