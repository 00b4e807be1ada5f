package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/engine"
	"backupd/db/pgcopy"
)

func newDBMigrateToPostgres(cfg *config.Config) *cobra.Command {
	var from, to string
	var batchRows int
	cmd := &cobra.Command{
		Use:   "migrate-to-postgres --from DATA --to postgres://…",
		Short: "Copy an appliance's SQLite store into a PostgreSQL database, verified and resumable",
		Long: `Copy the SQLite store of the data directory DATA (default --data) into the
PostgreSQL database --to (default --db), to run backupd on PostgreSQL from then on.

Stop backupd on DATA first (systemctl stop backupd): the copy reads DATA's database
read-only in one consistent snapshot and refuses to start while a backupd process
works on it. The target is brought to the current schema; it must be empty, or hold
an interrupted copy of the same store, which is then carried on (rows already there
are skipped, not duplicated). A database holding another store is refused, and so is
one backupd already uses (nodes served it, or it holds rows written after the copy):
nothing is written to it, and the refusal says how to go on without losing them.

Tables are copied in batches, keeping every ID. At the end the row counts of every
table are compared, and every stored configuration is decoded on PostgreSQL and
checked against its hash; the exit status is non-zero on any difference.

Then copy DATA/secret.key into the data directory of every node and start them with
--db naming the database: without that key, the stored device passwords cannot be
read. Keep DATA as it is until the new store has run well.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if from == "" {
				from = cfg.DataDir
			}
			if to == "" {
				to = cfg.DB
			}
			if to == "" {
				return errors.New("--to is required: the PostgreSQL database to copy into, postgres://user:password@host:port/database")
			}
			target := *cfg
			target.DataDir, target.DB = from, to
			if err := target.ValidateStore(); err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			if batchRows < 1 || batchRows > 10_000 {
				return errors.New("--batch-rows: want 1 to 10,000")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return migrateToPostgres(ctx, pgcopy.Copy{From: from, To: to, BatchRows: batchRows,
				Out: cmd.OutOrStdout(), Progress: cmd.ErrOrStderr()})
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "data directory of the SQLite store to copy (default: --data)")
	f.StringVar(&to, "to", "", "PostgreSQL database to copy into, postgres://user@host:port/database (default: --db, or BACKUPD_DB: "+
		"keep the password there, in PGPASSWORD or in ~/.pgpass rather than on the command line, which ps shows)")
	f.IntVar(&batchRows, "batch-rows", pgcopy.BatchRows, "rows per copied batch")
	_ = f.MarkHidden("batch-rows")
	return cmd
}

// migrateFrom is the data directory a migrate-to-postgres run reads, for
// the root's preparation of it (ownership, modes): --from when given.
func migrateFrom(cmd *cobra.Command) string {
	if cmd.Name() != "migrate-to-postgres" {
		return ""
	}
	if f := cmd.Flags().Lookup("from"); f != nil {
		return f.Value.String()
	}
	return ""
}

// migrateToPostgres checks that c.From is a data directory no backupd
// works on and reads its secret key, then copies its store (db's
// pgcopy.Run) and says what to do next.
func migrateToPostgres(ctx context.Context, c pgcopy.Copy) error {
	start := time.Now()
	if _, err := os.Stat(filepath.Join(c.From, db.FileName)); err != nil {
		return fmt.Errorf("no database in %s (%v); point --from at the data directory of the backupd to copy", c.From, err)
	}
	if who, busy := busyRunFile(c.From); busy {
		return fmt.Errorf("a backupd process is working on %s (%s is locked): stop it first (systemctl stop backupd, and no backupd backup run), then copy", c.From, who)
	}
	sealer, err := secret.Load(c.From)
	if err != nil {
		return fmt.Errorf("the secret key of %s: %w; the copy needs it, and every node then needs the same key", c.From, err)
	}
	c.KeyFingerprint = sealer.Fingerprint()
	res, err := pgcopy.Run(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.Out, "copied %s to %s in %s: %d tables, %d rows this run, verified\n", c.From, engine.RedactURL(c.To),
		time.Since(start).Round(time.Millisecond), res.Tables, res.Rows)
	fmt.Fprintf(c.Progress, "next: copy %s into the data directory of every node and start them with --db %s\n",
		filepath.Join(c.From, secret.KeyFile), engine.RedactURL(c.To))
	return nil
}
