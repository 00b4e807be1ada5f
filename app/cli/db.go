package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/datadir"
	"backupd/db"
	"backupd/db/engine"
	"backupd/db/seed"
)

func newDB(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "db", Short: "Database tools"}
	cmd.AddCommand(newDBSeed(cfg), newDBBackup(cfg), newDBCheck(cfg), newDBRepack(cfg), newDBMigrateToPostgres(cfg))
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
		Long: "Write a consistent copy of the database to FILE, also while `backupd serve` runs.\n" +
			"Keep secret.key from the data directory with it: without the key, the device\n" +
			"passwords stored in the copy cannot be read.\n\n" +
			"SQLite (the default): the copy is a database file (VACUUM INTO). To restore, put it\n" +
			"into an empty data directory as " + db.FileName + " beside that secret.key.\n\n" +
			"PostgreSQL (--db): the copy is pg_dump's custom format (pg_dump --format=custom),\n" +
			"made by the pg_dump found in PATH (Debian package postgresql-client, the server's\n" +
			"major version or newer). The URL's password is handed to pg_dump in its environment\n" +
			"(PGPASSWORD), not on its command line. To restore, create an empty database and run\n" +
			"pg_restore --no-owner --dbname=postgres://…/NEWDB FILE, then start backupd with\n" +
			"--db naming it and the same secret.key.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out FILE is required")
			}
			start := time.Now()
			var err error
			if cfg.Postgres() {
				err = pgDump(cmd, cfg, out)
			} else {
				err = sqliteBackup(cmd, cfg, out)
			}
			if err != nil {
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

func sqliteBackup(cmd *cobra.Command, cfg *config.Config, out string) error {
	store, err := openExisting(cmd, cfg)
	if err != nil {
		return err
	}
	defer store.Close()
	return store.BackupTo(cmd.Context(), out)
}

// pgDumpTimeout bounds one pg_dump run.
const pgDumpTimeout = 6 * time.Hour

// pgDump writes the PostgreSQL store to out with pg_dump's custom format.
// out is created first, empty and 0600 (pg_dump would create it 0644
// less the umask), which also refuses an existing file.
func pgDump(cmd *cobra.Command, cfg *config.Config, out string) error {
	bin, err := exec.LookPath("pg_dump")
	if err != nil {
		return errors.New("pg_dump was not found in PATH; install the PostgreSQL client tools (Debian: apt install postgresql-client, the server's major version or newer) or put pg_dump in PATH")
	}
	// The store must be this backupd's (schema current, same secret key)
	// before a copy of it is called a backup.
	store, err := openExisting(cmd, cfg)
	if err != nil {
		return err
	}
	store.Close()
	dbURL, password, err := splitPassword(cfg.DB)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s already exists; choose a new file name", out)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), pgDumpTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, bin, "--format=custom", "--no-password", "--file="+out, "--dbname="+dbURL)
	c.Env = os.Environ()
	if password != "" {
		c.Env = append(c.Env, "PGPASSWORD="+password)
	}
	c.Stdout = cmd.ErrOrStderr()
	c.Stderr = cmd.ErrOrStderr()
	if err := c.Run(); err != nil {
		_ = os.Remove(out)
		return fmt.Errorf("pg_dump of %s failed (%v); nothing was written", engine.RedactURL(cfg.DB), err)
	}
	return nil
}

// splitPassword takes the password out of a PostgreSQL URL, so that it
// can travel in the environment instead of on a command line that every
// local user's ps shows. The password may be before the @ or a
// password= parameter (lib/pq reads both); the parameter wins.
func splitPassword(raw string) (string, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", errors.New("--db: the PostgreSQL URL cannot be read")
	}
	var password string
	if u.User != nil {
		password, _ = u.User.Password()
		u.User = url.User(u.User.Username())
	}
	if q := u.Query(); q.Has("password") {
		password = q.Get("password")
		q.Del("password")
		u.RawQuery = q.Encode()
	}
	return u.String(), password, nil
}

func newDBCheck(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "check",
		Short: "Check the database: every stored configuration against its hash, and the database's own integrity",
		Long: "Check the database: every stored configuration is decoded and compared with its hash,\n" +
			"and the database's own integrity is checked (on SQLite, integrity_check and foreign keys).\n" +
			"It reads while `backupd serve` runs. Any problem is listed and the exit status is 1.",
		Args: cobra.NoArgs,
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
			"the size of the database, and holds writers back while it runs).\n\n" +
			"On PostgreSQL (--db), --vacuum runs VACUUM (ANALYZE): the freed space is reused by\n" +
			"PostgreSQL at once, without locking other nodes out; it is returned to the operating\n" +
			"system only by a VACUUM FULL, which locks the tables (a maintenance window).",
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
	cmd.Flags().BoolVar(&vacuum, "vacuum", false, "rewrite the database file compactly afterwards (SQLite VACUUM; PostgreSQL VACUUM (ANALYZE))")
	return cmd
}

func newDBSeed(cfg *config.Config) *cobra.Command {
	var opt seed.Options
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
			if err := store.Seed(cmd.Context(), opt); errors.Is(err, seed.ErrNotEmpty) {
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
