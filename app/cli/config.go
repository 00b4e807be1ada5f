package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/backup"
	"backupd/app/config"
	"backupd/app/platforms"
	"backupd/db"
)

// exitError ends backupd with its code. With a nil err nothing is
// printed: the code is the answer (diff's "differences", search's "no
// match").
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return "exit status " + strconv.Itoa(e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// annotationErrorExit on a command is the exit status of its errors, when
// it is not 1 (diff and search keep 1 for "differences" and "no match",
// as diff(1) and grep(1) do). Errors cobra finds in the arguments count.
const annotationErrorExit = "backupd/error-exit"

// exitCode is the status err ends cmd with, and whether to print err.
func exitCode(cmd *cobra.Command, err error) (int, bool) {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, ee.err != nil
	}
	if cmd != nil {
		if c, err := strconv.Atoi(cmd.Annotations[annotationErrorExit]); err == nil {
			return c, true
		}
	}
	return 1, true
}

// Bounds of config search from the shell: the product's search bounds
// (backup.MaxSearchLimit, MaxHitsPerVersion, MaxHitLine) and a time limit.
const (
	configSearchTimeout = 60 * time.Second
	configMaxArg        = 1000
)

// configSecretsHelp is what the config commands' help says of secrets.
const configSecretsHelp = `Passwords, keys and communities are masked as the web pages mask them
(<secret:3f9a1c>, a tag that changes when the secret does), unless the
setting "mask in the web pages and the CLI" is off. --reveal prints them in
clear text: only the owner of the data directory may, and it is written to
the audit log.`

// farFuture is a history position after every backup.
var farFuture = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

func newConfig(cfg *config.Config) *cobra.Command {
	var byName bool
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show, compare and search backed-up configurations; put one back on its device; push a change to many",
		Long: `Read the configurations in the store (SQLite in --data, or the PostgreSQL
database of --db), also while backupd serve runs: show, diff and search
change nothing, and write nothing to the audit log but a --reveal.

Put a stored version back on its device: restore asks for it, restores and
restore-status follow it, restore-approve, restore-reject and
restore-cancel decide it, restore-settings holds the rules (four eyes,
expiries). The running server previews, queues and runs restores; these
commands record requests and decisions, each written to the audit log.

Push a change to many devices: push makes a change set and prints its
dry run (the lines each device would be sent), pushes and push-status
follow it, push-approve and push-cancel decide it. The running server
pushes an approved set; these commands only record.

DEVICE is a device's name (any case) or its ID. A number is taken as an ID
when a device has that ID, otherwise as a name; --name always takes it as
a name (for a device named "42" while another has the ID 42).

A version is named by the backup ID the web UI and the API use (the UUID
of a backup record: GET /api/v1/devices/{id}/backups lists them, and the
web UI's version page shows it in its address).`,
	}
	cmd.PersistentFlags().BoolVar(&byName, "name", false, "take DEVICE as a device name, even when it is a number")
	cmd.AddCommand(newConfigShow(cfg, &byName), newConfigDiff(cfg, &byName), newConfigSearch(cfg),
		newConfigRestore(cfg, &byName), newConfigRestores(cfg, &byName), newConfigRestoreStatus(cfg),
		newConfigRestoreApprove(cfg), newConfigRestoreReject(cfg), newConfigRestoreCancel(cfg), newConfigRestoreSettings(cfg),
		newConfigPush(cfg, &byName), newConfigPushes(cfg), newConfigPushStatus(cfg, &byName), newConfigPushApprove(cfg),
		newConfigPushReject(cfg), newConfigPushCancel(cfg))
	commandLineOnly(cmd)
	return cmd
}

func newConfigShow(cfg *config.Config, byName *bool) *cobra.Command {
	var version, at string
	var reveal bool
	cmd := &cobra.Command{
		Use:   "show DEVICE [--version ID | --at TIME]",
		Short: "Print a device's configuration as stored (by default the latest good one)",
		Long: `Print a device's configuration as it was stored, byte for byte but for its
secrets: by default the latest good version; with --version the version of
that backup; with --at the version in effect at TIME, that is the newest
good backup started at or before it. TIME is RFC 3339
(2026-11-25T14:00:00Z) or local time as "2026-11-25 14:00" (seconds
optional).

` + configSecretsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var when time.Time
			if at != "" {
				t, err := parseConfigTime(at)
				if err != nil {
					return err
				}
				when = t
			}
			ctx := cmd.Context()
			store, err := openConfigStore(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			d, err := resolveDevice(ctx, store, args[0], *byName)
			if err != nil {
				return err
			}
			var b db.Backup
			switch {
			case version != "":
				b, err = deviceVersion(ctx, store, d, version)
			case at != "":
				b, err = versionAt(ctx, store, d, when)
			default:
				b, err = latestVersion(ctx, store, d)
			}
			if err != nil {
				return err
			}
			keys, err := configKeys(cmd, cfg, store, reveal, map[string]any{"device_id": d.ID, "command": "config show", "backup": b.ID})
			if err != nil {
				return err
			}
			text, err := store.SnapshotText(ctx, *b.SnapshotHash)
			if err != nil {
				return fmt.Errorf("configuration of backup %s: %w", b.ID, err)
			}
			if keys != nil {
				text = keys.Device(d.ID, d.Platform).Text(text)
			}
			_, err = io.WriteString(cmd.OutOrStdout(), text)
			return err
		},
	}
	cmd.Flags().BoolVar(&reveal, "reveal", false, "print the secrets in clear text (the data directory's owner only; audited)")
	cmd.Flags().StringVar(&version, "version", "", "backup `ID` of the version to show")
	cmd.Flags().StringVar(&at, "at", "", "show the version in effect at `TIME`")
	cmd.MarkFlagsMutuallyExclusive("version", "at")
	return cmd
}

func newConfigDiff(cfg *config.Config, byName *bool) *cobra.Command {
	var noNoise, reveal bool
	var color string
	cmd := &cobra.Command{
		Use:   "diff DEVICE [A] [B]",
		Short: "Unified diff between two versions of a device (by default its last change)",
		Long: `Print the unified diff between versions A and B of a device (backup IDs), as
the web UI's diff download. Without A and B: the version before the last
change against the latest good version. With A only: A against the latest.

Lines the noise rules of change detection ignore (the platform's built-in
rules and your own) are dimmed on a terminal, as the web UI dims them.
--no-noise leaves out the hunks whose changes are all noise.

Exit status, as diff(1): 0 no differences, 1 differences, 2 trouble.
With --no-noise, differences in noise only count as none.

` + configSecretsHelp,
		Args:        cobra.RangeArgs(1, 3),
		Annotations: map[string]string{annotationErrorExit: "2"},
		RunE: func(cmd *cobra.Command, args []string) error {
			useColor, err := wantColor(color, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			store, err := openConfigStore(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			d, err := resolveDevice(ctx, store, args[0], *byName)
			if err != nil {
				return err
			}
			var from, to db.Backup
			switch len(args) {
			case 3:
				if from, err = deviceVersion(ctx, store, d, args[1]); err != nil {
					return err
				}
				if to, err = deviceVersion(ctx, store, d, args[2]); err != nil {
					return err
				}
			case 2:
				if from, err = deviceVersion(ctx, store, d, args[1]); err != nil {
					return err
				}
				if to, err = latestVersion(ctx, store, d); err != nil {
					return err
				}
			default:
				if to, err = latestVersion(ctx, store, d); err != nil {
					return err
				}
				var ok bool
				if from, ok, err = store.VersionBeforeChange(ctx, to); err != nil {
					return err
				}
				if !ok {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s has had one configuration only; no differences\n", d.Name)
					return nil
				}
			}
			rules, err := store.NoiseRules(ctx)
			if err != nil {
				return err
			}
			keys, err := configKeys(cmd, cfg, store, reveal, map[string]any{"device_id": d.ID, "command": "config diff", "from": from.ID, "to": to.ID})
			if err != nil {
				return err
			}
			res, err := backup.DiffMasked(ctx, store, from.ID, to.ID, rules, keys)
			var bad *backup.NoiseRuleError
			if errors.As(err, &bad) {
				// As the web UI: a rule this release cannot use does not
				// stop the diff, which is then made with the built-in rules.
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: your noise rules cannot be used (%v); only the built-in ones are applied\n", bad)
				res, err = backup.DiffMasked(ctx, store, from.ID, to.ID, nil, keys)
			}
			if err != nil {
				return err
			}
			if res.Unified == "" || (noNoise && !res.Changed) {
				return nil
			}
			out := bufio.NewWriter(cmd.OutOrStdout())
			noise := writeDiff(out, res, useColor, noNoise)
			if err := out.Flush(); err != nil {
				return err
			}
			if noise > 0 && !noNoise {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d changed line(s) are noise by the noise rules; --no-noise leaves out the hunks with only noise\n", noise)
			}
			return &exitError{code: 1}
		},
	}
	cmd.Flags().BoolVar(&noNoise, "no-noise", false, "leave out hunks whose changes are all noise; noise-only differences exit 0")
	cmd.Flags().BoolVar(&reveal, "reveal", false, "print the secrets in clear text (the data directory's owner only; audited)")
	cmd.Flags().StringVar(&color, "color", "auto", "colour the diff: auto (on a terminal, unless NO_COLOR is set), always or never")
	return cmd
}

func newConfigSearch(cfg *config.Config) *cobra.Command {
	var group string
	var caseSensitive, fixed, reveal bool
	limit := backup.DefaultSearchLimit
	cmd := &cobra.Command{
		Use:   "search REGEX [--group G]",
		Short: "Search the latest configurations of all devices, printing device:line:text",
		Long: `Search every device's latest good configuration line by line, as the web UI's
configuration search does: REGEX is a Go (RE2) regular expression, matched
ignoring case unless --case-sensitive; --fixed-strings takes it literally.
Each matching line is printed as device:line:text. --group narrows the
search to a group (name or ID) and its subgroups.

The search keeps the web UI's bounds: at most --limit lines (up to ` + strconv.Itoa(backup.MaxSearchLimit) + `),
` + strconv.Itoa(backup.MaxHitsPerVersion) + ` per device, a line longer than ` + strconv.Itoa(backup.MaxHitLine) + ` bytes cut around its match,
and at most ` + configSearchTimeout.String() + `; a note on stderr says when a bound was reached.

Exit status, as grep(1): 0 lines found, 1 none, 2 trouble.

` + configSecretsHelp + ` Masked configurations are searched as
printed: a secret's value matches nothing.`,
		Args:        cobra.ExactArgs(1),
		Annotations: map[string]string{annotationErrorExit: "2"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 || limit > backup.MaxSearchLimit {
				return fmt.Errorf("--limit must be 1 to %d", backup.MaxSearchLimit)
			}
			ctx := cmd.Context()
			store, err := openConfigStore(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			scope := db.Scope{All: true}
			if group != "" {
				g, err := resolveGroup(ctx, store, group)
				if err != nil {
					return err
				}
				scope = db.Scope{GroupIDs: []int64{g.ID}}
			}
			keys, err := configKeys(cmd, cfg, store, reveal, map[string]any{"device_id": "", "command": "config search"})
			if err != nil {
				return err
			}
			sctx, cancel := context.WithTimeout(ctx, configSearchTimeout)
			defer cancel()
			res, err := backup.Search(sctx, store, scope, backup.SearchOptions{
				Query: args[0], Regex: !fixed, CaseSensitive: caseSensitive, Limit: limit, Mask: keys,
			})
			timedOut := errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
			switch {
			case errors.Is(err, backup.ErrInvalidQuery):
				what := "regular expression"
				if fixed {
					what = "search text"
				}
				return fmt.Errorf("bad %s %q: %s", what, args[0], strings.TrimPrefix(err.Error(), backup.ErrInvalidQuery.Error()+": "))
			case err != nil && !timedOut:
				return err
			}
			out := bufio.NewWriter(cmd.OutOrStdout())
			for _, h := range res.Hits {
				fmt.Fprintf(out, "%s:%d:%s\n", h.DeviceName, h.LineNo, h.Line)
			}
			if err := out.Flush(); err != nil {
				return err
			}
			switch {
			case timedOut:
				return fmt.Errorf("the search stopped after %s with %d line(s) found; narrow it with --group or a longer expression", configSearchTimeout, len(res.Hits))
			case res.Truncated && len(res.Hits) >= limit:
				fmt.Fprintf(cmd.ErrOrStderr(), "note: stopped at %d lines (--limit); more lines match\n", limit)
			case res.Truncated:
				fmt.Fprintf(cmd.ErrOrStderr(), "note: a device has more than %d matching lines; only its first %d are listed\n",
					backup.MaxHitsPerVersion, backup.MaxHitsPerVersion)
			}
			if len(res.Hits) == 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&group, "group", "", "search only the devices of this group (name or ID) and its subgroups")
	f.BoolVar(&caseSensitive, "case-sensitive", false, "match case (by default case is ignored)")
	f.BoolVarP(&fixed, "fixed-strings", "F", false, "take REGEX as plain text")
	f.IntVar(&limit, "limit", limit, "stop after this many lines (at most "+strconv.Itoa(backup.MaxSearchLimit)+")")
	f.BoolVar(&reveal, "reveal", false, "search and print the secrets in clear text (the data directory's owner only; audited)")
	return cmd
}

// openConfigStore opens the store read-only: no migration, no bootstrap,
// no write (see db.OpenReadOnly and db.OpenPostgresReadOnly), so it reads
// while backupd serve runs and writes. Custom platforms are loaded for
// their noise rules.
func openConfigStore(cmd *cobra.Command, cfg *config.Config) (*db.Store, error) {
	var store *db.Store
	var err error
	if cfg.Postgres() {
		store, err = db.OpenPostgresReadOnly(cmd.Context(), cfg.DB)
	} else {
		store, err = db.OpenReadOnly(cmd.Context(), cfg.DataDir)
	}
	if err != nil {
		return nil, err
	}
	if err := platforms.LoadStore(cmd.Context(), store); err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: %v\n", err)
	}
	return store, nil
}

// resolveDevice finds DEVICE by ID or name (see the config command's help).
func resolveDevice(ctx context.Context, store *db.Store, arg string, byName bool) (db.Device, error) {
	if arg == "" || len(arg) > configMaxArg {
		return db.Device{}, errors.New("name a device by its name or ID")
	}
	if !byName {
		if id, err := strconv.ParseInt(arg, 10, 64); err == nil && id > 0 {
			d, err := store.GetDevice(ctx, id)
			if err == nil || !errors.Is(err, db.ErrNotFound) {
				return d, err
			}
		}
	}
	d, err := store.DeviceByName(ctx, arg)
	if errors.Is(err, db.ErrNotFound) {
		if byName {
			return db.Device{}, fmt.Errorf("no device named %q", arg)
		}
		return db.Device{}, fmt.Errorf("no device with the name or ID %q", arg)
	}
	if err != nil {
		return db.Device{}, fmt.Errorf("find device %q: %w", arg, err)
	}
	return d, nil
}

// resolveGroup finds a group by ID (when it is a number naming one) or name.
func resolveGroup(ctx context.Context, store *db.Store, arg string) (db.Group, error) {
	if len(arg) > configMaxArg {
		return db.Group{}, errors.New("--group: name a group by its name or ID")
	}
	if id, err := strconv.ParseInt(arg, 10, 64); err == nil && id > 0 {
		g, err := store.GetGroup(ctx, id)
		if err == nil || !errors.Is(err, db.ErrNotFound) {
			return g, err
		}
	}
	g, err := store.GroupByName(ctx, arg)
	if errors.Is(err, db.ErrNotFound) {
		return db.Group{}, fmt.Errorf("no group with the name or ID %q", arg)
	}
	if err != nil {
		return db.Group{}, fmt.Errorf("find group %q: %w", arg, err)
	}
	return g, nil
}

// latestVersion is the device's newest successful backup.
func latestVersion(ctx context.Context, store *db.Store, d db.Device) (db.Backup, error) {
	b, ok, err := store.PreviousVersion(ctx, d.ID, db.BackupCursor{StartedAt: farFuture})
	if err != nil {
		return b, err
	}
	if !ok {
		return b, fmt.Errorf("device %s has no successful backup yet", d.Name)
	}
	return b, nil
}

// versionAt is the version in effect at t: the newest successful backup
// started at or before it (backup times are kept to the millisecond; the
// position just after t, with an ID before every ID, is after them all).
func versionAt(ctx context.Context, store *db.Store, d db.Device, t time.Time) (db.Backup, error) {
	after := t.Truncate(time.Millisecond).Add(time.Millisecond)
	b, ok, err := store.PreviousVersion(ctx, d.ID, db.BackupCursor{StartedAt: after})
	if err != nil {
		return b, err
	}
	if !ok {
		return b, fmt.Errorf("device %s has no successful backup started at or before %s", d.Name, t.Format(time.RFC3339))
	}
	return b, nil
}

// deviceVersion loads backup id, which must be a version of d that holds a
// configuration.
func deviceVersion(ctx context.Context, store *db.Store, d db.Device, id string) (db.Backup, error) {
	if id == "" || len(id) > 64 {
		return db.Backup{}, fmt.Errorf("version %q: want a backup ID", id)
	}
	b, err := store.GetBackup(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return b, fmt.Errorf("no backup with the ID %q", id)
	}
	if err != nil {
		return b, err
	}
	if b.DeviceID != d.ID {
		other := fmt.Sprintf("ID %d", b.DeviceID)
		if od, err := store.GetDevice(ctx, b.DeviceID); err == nil {
			other = fmt.Sprintf("%s (ID %d)", od.Name, od.ID)
		}
		return b, fmt.Errorf("backup %s is a version of device %s, not of %s (ID %d)", id, other, d.Name, d.ID)
	}
	if b.SnapshotHash == nil {
		reason := "it has not finished"
		switch {
		case b.ErrorMessage != nil:
			reason = "it failed: " + *b.ErrorMessage
		case b.FinishedAt != nil:
			reason = "it failed"
		}
		return b, fmt.Errorf("backup %s of %s holds no configuration (%s)", id, b.StartedAt.UTC().Format(time.RFC3339), reason)
	}
	return b, nil
}

// parseConfigTime reads --at: RFC 3339, or local time without a zone.
func parseConfigTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf(`--at %q: want RFC 3339 (2026-11-25T14:00:00Z) or local time as "2026-11-25 14:00"`, s)
}

// wantColor decides --color for w.
func wantColor(mode string, w io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto":
		if _, set := os.LookupEnv("NO_COLOR"); set {
			return false, nil
		}
		f, ok := w.(*os.File)
		if !ok {
			return false, nil
		}
		st, err := f.Stat()
		return err == nil && st.Mode()&os.ModeCharDevice != 0, nil
	}
	return false, fmt.Errorf("--color %q: want auto, always or never", mode)
}

// ANSI styles of the coloured diff.
const (
	ansiReset   = "\x1b[0m"
	ansiHeader  = "\x1b[1m"
	ansiHunk    = "\x1b[36m"
	ansiRemoved = "\x1b[31m"
	ansiAdded   = "\x1b[32m"
	ansiNoise   = "\x1b[2m" // dim, as the web UI dims noise
)

// writeDiff writes res's unified diff: its text as is, coloured when
// color, without the hunks of noise only when noNoise. It returns how
// many changed lines are noise. The unified text holds, after its two
// header lines, each hunk's "@@" line and then one line per hunk line
// (and a "\ No newline at end of file" after a last line without one),
// so it is walked together with the hunks.
func writeDiff(w io.Writer, res backup.DiffResult, color, noNoise bool) int {
	lines := strings.SplitAfter(res.Unified, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	style := func(s, text string) {
		if color && s != "" {
			io.WriteString(w, s+strings.TrimSuffix(text, "\n")+ansiReset+"\n")
			return
		}
		io.WriteString(w, text)
	}
	i := 0
	for ; i < 2 && i < len(lines); i++ {
		style(ansiHeader, lines[i])
	}
	noise := 0
	for _, h := range res.Hunks {
		if i >= len(lines) {
			break
		}
		onlyNoise := true
		for _, l := range h.Lines {
			if l.Kind != backup.LineContext {
				if l.Noise {
					noise++
				} else {
					onlyNoise = false
				}
			}
		}
		skip := noNoise && onlyNoise
		emit := func(s, text string) {
			if !skip {
				style(s, text)
			}
		}
		emit(ansiHunk, lines[i])
		i++
		for _, l := range h.Lines {
			if i >= len(lines) {
				break
			}
			s := ""
			switch {
			case l.Noise:
				s = ansiNoise
			case l.Kind == backup.LineRemoved:
				s = ansiRemoved
			case l.Kind == backup.LineAdded:
				s = ansiAdded
			}
			emit(s, lines[i])
			i++
			if i < len(lines) && strings.HasPrefix(lines[i], `\ `) {
				emit("", lines[i])
				i++
			}
		}
	}
	return noise
}
