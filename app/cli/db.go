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
	cmd.AddCommand(newDBSeed(cfg), newDBBackup(cfg), newDBCheck(cfg), newDBRepack(cfg))
	return cmd
}

// openExisting opens a data directory that must already hold a database:
// the copy and check commands never create one by mistake.
func openExisting(cmd *cobra.Command, cfg *config.Config) (*db.Store, error) {
	if cfg.Postgres() {
		store, _, err := openData(cmd.Context(), cfg, cmd.ErrOrStderr())
		return store, err
	}
	if _, err := os.Stat(filepath.Join(cfg.DataDir, db.FileName)); err != nil {
		return nil, fmt.Errorf("no database in %s (%v); point --data at backupd's data directory", cfg.DataDir, err)
	}
	store, _, err := openData(cmd.Context(), cfg, cmd.ErrOrStderr())
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
		Short: "Check the database's integrity (SQLite integrity_check, foreign keys, every stored configuration against its hash)",
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

func newDBRepack(cfg *config.Config) *cobra.Command {
	var vacuum bool
	cmd := &cobra.Command{
		Use:   "repack [--vacuum]",
		Short: "Store older configuration versions as deltas now (serve does it in the background)",
		Long: "Store every device's older configuration versions as deltas against the next newer one,\n" +
			"as new backups are stored anyway: what a database from before deltas needs once. serve does\n" +
			"it in the background minutes after start and daily; this does it now, also while serve runs.\n" +
			"Interrupting it loses nothing; the next run carries on. The file keeps its size until\n" +
			"SQLite reuses the freed pages; --vacuum rewrites it compactly afterwards (needs free space\n" +
			"the size of the database, and holds writers back while it runs).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := openExisting(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			start := time.Now()
			before := store.SizeBytes()
			last := time.Now()
			res, err := store.Repack(cmd.Context(), func(r db.RepackResult) {
				if time.Since(last) > 5*time.Second {
					last = time.Now()
					fmt.Fprintf(cmd.ErrOrStderr(), "%d devices, %d versions packed\n", r.Devices, r.Packed)
				}
			})
			if err != nil {
				return fmt.Errorf("repack stopped after %d devices (%d versions packed; run it again to carry on): %w", res.Devices, res.Packed, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "packed %d versions of %d devices in %s: %d bytes of stored configuration freed\n",
				res.Packed, res.Devices, time.Since(start).Round(time.Millisecond), res.Bytes)
			if vacuum {
				if err := store.Vacuum(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "vacuumed: %d -> %d bytes on disk\n", before, store.SizeBytes())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&vacuum, "vacuum", false, "rewrite the database file compactly afterwards (SQLite VACUUM)")
	return cmd
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
			store, _, err := openData(cmd.Context(), cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			start := time.Now()
			if err := store.Seed(cmd.Context(), opt); errors.Is(err, db.ErrNotEmpty) {
				return fmt.Errorf("%s already holds devices; seed only an empty store", storeName(cfg))
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
