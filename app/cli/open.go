package cli

import (
	"context"
	"fmt"
	"io"

	"backupd/app/auth"
	"backupd/app/secret"
	"backupd/db"
)

// openData opens the data directory the way every command needs it:
// schema current, built-in roles present, secret key loaded. On a fresh
// directory it creates the admin user and shows its password once on
// stderr.
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
		fmt.Fprintf(stderr, "\nCreated user %q with the one-time password below; it is shown only now and must be changed at first login.\n\n    %s\n\n",
			auth.AdminUsername, password)
	}
	return store, sealer, nil
}
