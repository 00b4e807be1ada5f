// Package cli is backupd's command line, one file per command.
package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"backupd/app/config"
	"backupd/app/datadir"
)

// Execute runs the command line and exits non-zero on failure: 1, or
// the status the failing command gives (see exitCode).
func Execute() {
	cmd, err := NewRoot().ExecuteC()
	if err == nil {
		return
	}
	code, show := exitCode(cmd, err)
	if show {
		fmt.Fprintln(os.Stderr, "error:", err)
	}
	os.Exit(code)
}

// NewRoot builds the command tree. cfg is shared by every command through
// the persistent flags.
func NewRoot() *cobra.Command {
	cfg := config.Defaults()
	root := &cobra.Command{
		Use:           "backupd",
		Short:         "Network configuration backup appliance",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyEnv(cmd.Flags()); err != nil {
				return err
			}
			if !opensData(cmd) {
				return nil
			}
			if err := cfg.ValidateStore(); err != nil {
				return err
			}
			// Before any file is opened: umask, the switch from root to
			// the directory's owner, private modes.
			dir := cfg.DataDir
			if from := migrateFrom(cmd); from != "" {
				dir = from
			}
			return datadir.Prepare(dir, cfg.Logger(cmd.ErrOrStderr()))
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&cfg.DataDir, "data", cfg.DataDir, "data directory (SQLite database, secret.key and run files)")
	pf.StringVar(&cfg.DB, "db", cfg.DB, "database: empty for SQLite in --data, or a PostgreSQL URL postgres://user@host:port/database "+
		"shared by several nodes (secret.key stays in --data and must be the same on every node); "+
		"keep the password off the command line, which ps shows: set BACKUPD_DB instead, or use PGPASSWORD or ~/.pgpass")
	pf.StringVar(&cfg.LogFormat, "log-format", cfg.LogFormat, "log format: text or json")
	pf.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "log level: debug, info, warn or error")
	root.AddCommand(newServe(&cfg), newMigrate(&cfg), newKey(&cfg), newUser(&cfg), newSignIn(&cfg), newDB(&cfg), newBackup(&cfg), newDevice(&cfg), newPlatform(&cfg), newConfig(&cfg), newImport(&cfg), newInventory(&cfg), newExport(&cfg), newCollector(&cfg), newVersion())
	return root
}

// opensData reports whether cmd works on the data directory: every
// command but version, help and shell completion.
func opensData(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		switch c.Name() {
		case "version", "help", "completion", cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd:
			return false
		}
	}
	return cmd.HasParent()
}

// annotationNoEnv marks a flag applyEnv leaves alone: it is taken from
// the command line only.
const annotationNoEnv = "backupd_no_env"

// commandLineOnly marks the flags of cmd and of every command under it
// (their own flags and the persistent ones they define, not those they
// inherit) as taken from the command line only. It is for one-off
// commands whose flags say what this one run does (which settings a
// source gets, what a push sends, whether to print JSON or reveal
// secrets): a BACKUPD_CONFIG, BACKUPD_NAME or BACKUPD_JSON left in a
// shell for another program must not silently fill them. The settings a
// service keeps (the global flags, serve's, the collector's) still come
// from the environment. Call it once the commands are built.
func commandLineOnly(cmd *cobra.Command) {
	mark := func(f *pflag.Flag) {
		if f.Annotations == nil {
			f.Annotations = map[string][]string{}
		}
		f.Annotations[annotationNoEnv] = []string{"true"}
	}
	cmd.Flags().VisitAll(mark)
	cmd.PersistentFlags().VisitAll(mark)
	for _, c := range cmd.Commands() {
		commandLineOnly(c)
	}
}

// applyEnv sets every flag the command line left alone from its
// BACKUPD_<FLAG> variable, so flags > environment > defaults; flags
// marked commandLineOnly are left alone. A flag set so counts as given
// (Changed), as on the command line: serve saves the git flags it was
// given, backup run keeps the retention it was given.
func applyEnv(flags *pflag.FlagSet) error {
	var err error
	flags.VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || f.Name == "help" || f.Annotations[annotationNoEnv] != nil {
			return
		}
		v, ok := os.LookupEnv(config.EnvName(f.Name))
		if !ok {
			return
		}
		if f.Value.Type() == "stringArray" || f.Value.Type() == "stringSlice" {
			// Lists come comma-separated from the environment.
			if sv, isSlice := f.Value.(pflag.SliceValue); isSlice {
				if e := sv.Replace(splitList(v)); e != nil {
					err = fmt.Errorf("%s: %w", config.EnvName(f.Name), e)
				}
				f.Changed = true
				return
			}
		}
		if e := f.Value.Set(v); e != nil {
			err = fmt.Errorf("%s: %w", config.EnvName(f.Name), e)
		}
		f.Changed = true
	})
	return err
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
