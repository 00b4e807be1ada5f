package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"backupd/app/auth"
	"backupd/app/config"
	"backupd/app/notify/policy"
	"backupd/app/platforms"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/engine"
	"backupd/db/pgcopy"
)

// printList is a list command's work: it opens the store, reads the
// items with list and prints them on stdout as a table, header first,
// then one line per item as line writes it.
func printList[T any](cmd *cobra.Command, cfg *config.Config, list func(*db.Store, context.Context) ([]T, error), header string, line func(w io.Writer, item T)) error {
	ctx := cmd.Context()
	store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer store.Close()
	items, err := list(store, ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, header)
	for _, it := range items {
		line(w, it)
	}
	return w.Flush()
}

// openData opens the store the way every command needs it: SQLite in the
// data directory, or the PostgreSQL database of --db; schema current,
// built-in roles present, secret key loaded (from the data directory in
// both cases) and, on PostgreSQL, the same as the other nodes'. On a
// fresh store it creates the admin user and shows its password once on
// stderr. The custom platforms are loaded into the driver registry.
func openData(ctx context.Context, cfg *config.Config, stderr io.Writer) (*db.Store, *secret.Sealer, error) {
	if err := cfg.ValidateStore(); err != nil {
		return nil, nil, err
	}
	sealer, err := secret.LoadOrCreate(cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	if store.Postgres() {
		if err := checkKeyFingerprint(ctx, store, sealer, cfg.DataDir); err != nil {
			store.Close()
			return nil, nil, err
		}
		if err := checkNoUnfinishedCopy(ctx, store); err != nil {
			store.Close()
			return nil, nil, err
		}
	}
	password, err := auth.Bootstrap(ctx, store)
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	if password != "" {
		// Hashing the password took argon2id's 19 MiB; hand it back to the
		// system now rather than at the runtime's leisure, so that a fresh
		// appliance idles small.
		debug.FreeOSMemory()
		fmt.Fprintf(stderr, "\nCreated user %q with the one-time password below; it is shown only now and must be changed at first login.\n\n    %s\n\n",
			auth.AdminUsername, password)
	}
	// The administrator's platforms, before any device is validated or
	// collected. One that no longer loads is named and left out: its
	// devices then fail with "unknown platform" instead of the whole
	// appliance refusing to start.
	if err := platforms.LoadStore(ctx, store); err != nil {
		fmt.Fprintf(stderr, "warning: %v\n", err)
	}
	return store, sealer, nil
}

// openStore opens (creating or migrating) the store cfg names, with
// backupd's event policy: every command that records a backup, a check
// or a push decides its events the same way.
func openStore(ctx context.Context, cfg *config.Config) (*db.Store, error) {
	var s *db.Store
	var err error
	if cfg.Postgres() {
		if s, err = db.OpenPostgres(ctx, cfg.DB); err != nil {
			return nil, fmt.Errorf("%w (database %s)", err, engine.RedactURL(cfg.DB))
		}
	} else if s, err = db.Open(ctx, cfg.DataDir); err != nil {
		return nil, err
	}
	s.SetEventPolicy(policy.Decide)
	return s, nil
}

// storeName names the store in messages and logs: the data directory, or
// the PostgreSQL URL without its password.
func storeName(cfg *config.Config) string {
	if cfg.Postgres() {
		return engine.RedactURL(cfg.DB)
	}
	return cfg.DataDir
}

// errKeyMismatch is a node's secret key differing from the one the
// store's sealed secrets were written with.
var errKeyMismatch = errors.New("this node's secret key is not the one the database was set up with")

// checkKeyFingerprint makes every node of a PostgreSQL store use one
// secret key: the first to open the store records its key's fingerprint
// (never the key), and a node with another key refuses to start, since
// it could neither open the device passwords the others sealed nor seal
// ones they can open.
func checkKeyFingerprint(ctx context.Context, store *db.Store, sealer *secret.Sealer, dataDir string) error {
	fp := sealer.Fingerprint()
	// The first node's fingerprint is recorded; any other keeps it.
	have, err := store.RecordKeyFingerprint(ctx, fp)
	if err != nil {
		return err
	}
	return sameKey(have, fp, dataDir)
}

// sameKey compares the key fingerprint a PostgreSQL store recorded
// (have) with this node's (fp).
func sameKey(have, fp, dataDir string) error {
	if have != fp {
		return fmt.Errorf("%w: every node of a PostgreSQL store needs the same %s; copy DATA/%s from the first node (its fingerprint begins %.12s, this node's %s begins %.12s), or set %s to the same key",
			errKeyMismatch, secret.KeyFile, secret.KeyFile, have, filepath.Join(dataDir, secret.KeyFile), fp, secret.EnvKey)
	}
	return nil
}

// checkNoUnfinishedCopy keeps backupd off a database that
// migrate-to-postgres is still filling: half a store would be taken for
// the whole.
func checkNoUnfinishedCopy(ctx context.Context, store *db.Store) error {
	from, started, unfinished, err := pgcopy.Unfinished(ctx, store)
	if err != nil {
		return err
	}
	if unfinished {
		return fmt.Errorf("the copy of %s into this database (backupd db migrate-to-postgres, started %s) is unfinished: run it again to finish it before backupd uses the database",
			from, started)
	}
	return nil
}
