package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/db"
	"backupd/db/engine"
)

func newMigrate(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:       "migrate [up|status|down]",
		Short:     "Apply, inspect or roll back database migrations (default: up)",
		Args:      cobra.MatchAll(cobra.MaximumNArgs(1), cobra.OnlyValidArgs),
		ValidArgs: []string{"up", "status", "down"},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := engine.MigrateUp
			if len(args) == 1 {
				dir = engine.MigrateDirection(args[0])
			}
			if cfg.Postgres() {
				if err := engine.MigratePostgres(cmd.Context(), cfg.DB, dir, cmd.OutOrStdout()); err != nil {
					return fmt.Errorf("%w (database %s)", err, engine.RedactURL(cfg.DB))
				}
				return nil
			}
			if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
				return err
			}
			return db.Migrate(cmd.Context(), filepath.Join(cfg.DataDir, db.FileName), dir, cmd.OutOrStdout())
		},
	}
}
