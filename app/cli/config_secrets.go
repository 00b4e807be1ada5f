package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/datadir"
	"backupd/app/redact"
	"backupd/app/secret"
	"backupd/db"
)

// The config commands print configurations as the web pages show them:
// secrets masked (app/redact) when the settings mask views. --reveal is
// the break-glass: the data directory's owner only, and written to the
// audit log.

// configKeys returns the keyring that masks what a config command
// prints, nil when it prints secrets: the settings do not mask views,
// or reveal was asked for and allowed (then audited as config.reveal
// with details).
func configKeys(cmd *cobra.Command, cfg *config.Config, store *db.Store, reveal bool, details map[string]any) (*redact.Keyring, error) {
	ctx := cmd.Context()
	if reveal {
		if err := datadir.CheckOwner(cfg.DataDir); err != nil {
			return nil, fmt.Errorf("--reveal: %w", err)
		}
		if err := auditReveal(ctx, cmd, cfg, details); err != nil {
			return nil, err
		}
		return nil, nil
	}
	set, err := store.SecretMaskingSettings(ctx)
	if err != nil {
		return nil, err
	}
	if !set.Views {
		return nil, nil
	}
	sealer, err := secret.Load(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("secrets are masked with the data directory's key, which cannot be read: %w", err)
	}
	return redact.NewKeyring(sealer), nil
}

// auditReveal records a reveal before anything is printed: a reveal that
// cannot be recorded does not happen.
func auditReveal(ctx context.Context, cmd *cobra.Command, cfg *config.Config, details map[string]any) error {
	store, err := openStore(ctx, cfg)
	if err != nil {
		return fmt.Errorf("--reveal is written to the audit log, which cannot be opened: %w", err)
	}
	defer store.Close()
	if err := store.RecordAudit(ctx, db.AuditEntry{
		Username: cliActor(), Interface: "cli", Action: "config.reveal", TargetType: "device",
		TargetID: fmt.Sprint(details["device_id"]), Details: details,
	}); err != nil {
		return fmt.Errorf("--reveal is written to the audit log, which failed: %w", err)
	}
	fmt.Fprintln(cmd.ErrOrStderr(), "note: secrets are shown in clear text; this was written to the audit log")
	return nil
}
