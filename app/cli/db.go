package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/datadir"
	"backupd/db"
)

func newDB(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "db", Short: "Database tools"}
	cmd.AddCommand(newDBSeed(cfg), newDBBackup(cfg), newDBCheck(cfg))
	return cmd
}

// openExisting opens a data directory that must already hold a database:
// the copy and check commands never create one by mistake.
func openExisting(cmd *cobra.Command, cfg *config.Config) (*db.Store, error) {
	if _, err := os.Stat(filepath.Join(cfg.DataDir, db.FileName)); err != nil {
		return nil, fmt.Errorf("no database in %s (%v); point --data at backupd's data directory", cfg.DataDir, err)
	}
	store, _, err := openData(cmd.Context(), cfg.DataDir, cmd.ErrOrStderr())
	return store, err
}

func newDBBackup(cfg *config.Config) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "backup --out FILE",
		Short: "Write a consistent copy of the database, also while the server runs",
		Long: "Write a consistent copy of the database to FILE (SQLite VACUUM INTO), also while\n" +
			"`backupd serve` runs. Keep secret.key from the data directory with it: without the\n" +
			"key, the device passwords stored in the copy cannot be read. To restore, put the\n" +
			"copy into an empty data directory as " + db.FileName + " beside that secret.key.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out FILE is required")
			}
			store, err := openExisting(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			start := time.Now()
			if err := store.BackupTo(cmd.Context(), out); err != nil {
				if who := datadir.RunningAs(); who != "" && errors.Is(err, fs.ErrPermission) {
					return fmt.Errorf("%w; this command runs as user %s, who owns the data directory: choose a folder that user can write", err, who)
				}
				return err
			}
			st, err := os.Stat(out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (%d bytes) in %s\n", out, st.Size(), time.Since(start).Round(time.Millisecond))
			fmt.Fprintf(cmd.ErrOrStderr(), "keep %s with it: without that key the stored device passwords cannot be read\n",
				filepath.Join(cfg.DataDir, "secret.key"))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "file to write the copy to (must not exist)")
	return cmd
}

func newDBCheck(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Check the database's integrity (SQLite integrity_check and foreign keys)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := openExisting(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			problems, err := store.Check(cmd.Context())
			if err != nil {
				return err
			}
			if len(problems) > 0 {
				for _, p := range problems {
					fmt.Fprintln(cmd.OutOrStdout(), p)
				}
				return fmt.Errorf("the database has %d problems; restore the last good copy (backupd db backup)", len(problems))
			}
			fmt.Fprintln(cmd.OutOrStdout(), "ok")
			return nil
		},
	}
}

func newDBSeed(cfg *config.Config) *cobra.Command {
	var opt db.SeedOptions
	cmd := &cobra.Command{
		Use:   "seed",
		Short: "Fill an empty data directory with a synthetic inventory and backup history (for trials and load tests)",
		Long: "Fill an empty data directory with synthetic groups, devices and a year of backup history,\n" +
			"for trying backupd out and for load tests. Refuses a directory that already holds devices.\n" +
			"10,000 devices × 100 backups (1,000,000 records) take well under a minute.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opt.Devices < 1 || opt.Devices > 1_000_000 || opt.BackupsPerDevice < 1 || opt.BackupsPerDevice > 10_000 {
				return errors.New("--devices must be 1 to 1,000,000 and --backups-per-device 1 to 10,000")
			}
			store, _, err := openData(cmd.Context(), cfg.DataDir, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			start := time.Now()
			if err := store.Seed(cmd.Context(), opt); errors.Is(err, db.ErrNotEmpty) {
				return fmt.Errorf("%s already holds devices; seed only an empty data directory", cfg.DataDir)
			} else if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "seeded %d devices with %d backup records in %s\n",
				opt.Devices, opt.Devices*opt.BackupsPerDevice, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&opt.Devices, "devices", 100, "number of devices")
	f.IntVar(&opt.BackupsPerDevice, "backups-per-device", 10, "backup records per device")
	return cmd
}
