package cli

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"

	"backupd/app/auth"
	"backupd/app/platforms"
	"backupd/app/secret"
	"backupd/db"
)

// openData opens the data directory the way every command needs it:
// schema current, built-in roles present, secret key loaded. On a fresh
// directory it creates the admin user and shows its password once on
// stderr. The custom platforms are loaded into the driver registry.
func openData(ctx context.Context, dataDir string, stderr io.Writer) (*db.Store, *secret.Sealer, error) {
	sealer, err := secret.LoadOrCreate(dataDir)
	if err != nil {
		return nil, nil, err
	}
	store, err := db.Open(ctx, dataDir)
	if err != nil {
		return nil, nil, err
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
