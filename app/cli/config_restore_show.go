package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"backupd/app/backup"
	"backupd/app/config"
	"backupd/db"
)

// The reading restore commands: config restores and config
// restore-status. They open the store read-only, as show and diff do,
// so they work while the server runs.

// timeRFC3339 is how the restore commands print times: UTC, to the
// second.
const timeRFC3339 = "2006-01-02T15:04:05Z"

// restoreJSON is one restore as --json prints it. Its fields are a
// contract: scripts read them, so they are only ever added to.
type restoreJSON struct {
	ID     int64             `json:"id"`
	Device restoreDeviceJSON `json:"device"`
	State  string            `json:"state"`
	Stage  string            `json:"stage"`
	Method string            `json:"method"`
	// Lines are the line numbers of the version a merge sends (null: the
	// whole version).
	Lines        []int          `json:"lines"`
	Version      string         `json:"version"`
	RequestedBy  string         `json:"requested_by"`
	RequestedAt  string         `json:"requested_at"`
	Reason       string         `json:"reason"`
	DecidedBy    *string        `json:"decided_by"`
	DecidedAt    *string        `json:"decided_at"`
	DecisionNote string         `json:"decision_note"`
	ExpiresAt    *string        `json:"expires_at"`
	JobID        *int64         `json:"job_id"`
	StartedAt    *string        `json:"started_at"`
	FinishedAt   *string        `json:"finished_at"`
	Backups      restoreBackups `json:"backups"`
	// Outcome is the runner's summary of a run (verified, passes, rolled
	// back, …), null before one ended.
	Outcome     json.RawMessage `json:"outcome"`
	Error       *string         `json:"error"`
	ErrorReason *string         `json:"error_reason"`
}

type restoreDeviceJSON struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// restoreBackups are the backups a restore took, by role.
type restoreBackups struct {
	Preview  *string `json:"preview"`
	Before   *string `json:"before"`
	After    *string `json:"after"`
	Rollback *string `json:"rollback"`
}

// restoreStatusJSON is config restore-status --json: the restore, its
// preview (null before it is ready) and, with --transcript, its session.
type restoreStatusJSON struct {
	restoreJSON
	Preview             *previewJSON            `json:"preview"`
	Transcript          *[]db.TranscriptSegment `json:"transcript,omitempty"`
	TranscriptTruncated bool                    `json:"transcript_truncated"`
}

// previewJSON is what a restore would change: the unified diff from the
// device's configuration at the preview to the version, secrets masked
// as config diff masks them.
type previewJSON struct {
	Backup  string `json:"backup"`
	Diff    string `json:"diff"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	// Noise counts the changed lines the noise rules ignore.
	Noise int `json:"noise"`
	// Unavailable says why there is no diff (the preview's backup was
	// deleted since), "" when there is one.
	Unavailable string `json:"unavailable,omitempty"`
}

func toRestoreJSON(r db.Restore) restoreJSON {
	j := restoreJSON{
		ID: r.ID, Device: restoreDeviceJSON{ID: r.DeviceID, Name: r.DeviceName}, State: r.State, Stage: r.Stage, Method: r.Method,
		Lines: r.Lines, Version: r.TargetBackupID, RequestedBy: r.RequestedByName, RequestedAt: restoreTime(&r.RequestedAt), Reason: r.Reason,
		DecidedBy: r.DecidedByName, DecidedAt: restoreTimePtr(r.DecidedAt), DecisionNote: r.DecisionNote,
		ExpiresAt: restoreTimePtr(r.ExpiresAt), JobID: r.JobID, StartedAt: restoreTimePtr(r.StartedAt), FinishedAt: restoreTimePtr(r.FinishedAt),
		Backups:     restoreBackups{Preview: r.PreviewBackupID, Before: r.PreBackupID, After: r.PostBackupID, Rollback: r.RollbackBackupID},
		Outcome:     json.RawMessage("null"),
		Error:       r.Error,
		ErrorReason: r.ErrorReason,
	}
	if r.Outcome != nil && json.Valid([]byte(*r.Outcome)) {
		j.Outcome = json.RawMessage(*r.Outcome)
	}
	return j
}

// restoreTime prints a stored restore time (UTC, TimeFormat) as RFC
// 3339; "" for none.
func restoreTime(s *string) string {
	if s == nil || *s == "" {
		return ""
	}
	t, err := time.Parse(db.TimeFormat, *s)
	if err != nil {
		return *s
	}
	return t.UTC().Format(timeRFC3339)
}

func restoreTimePtr(s *string) *string {
	if s == nil {
		return nil
	}
	t := restoreTime(s)
	return &t
}

func newConfigRestores(cfg *config.Config, byName *bool) *cobra.Command {
	var device string
	var asJSON bool
	var lf listFlags
	cmd := &cobra.Command{
		Use:   "restores [--state S] [--device DEVICE] [--json]",
		Short: "List restores, newest first",
		Long: `List restores, newest first: their ID, device, state (and stage while one
runs), who asked and when, and the version. --state keeps the restores in
those states (repeatable, or comma-separated; "open" stands for every
state of a restore not yet ended); --device those of one device.
--limit (at most 500) bounds the list; --before ID lists those older than
that restore, for the next page. --json prints an array of the objects
config restore-status --json prints, without preview and session.

States: ` + strings.Join(db.RestoreStates, ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			states, err := lf.read("restore", db.RestoreStates, db.RestoreOpenStates)
			if err != nil {
				return err
			}
			f := db.RestoreFilter{States: states, Limit: lf.limit, BeforeID: lf.before}
			ctx := cmd.Context()
			store, err := openConfigStore(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			if f.DeviceID, err = restoreDevice(ctx, store, device, *byName); err != nil {
				return err
			}
			list, next, err := store.ListRestores(ctx, f)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				items := make([]restoreJSON, 0, len(list))
				for _, r := range list {
					items = append(items, toRestoreJSON(r))
				}
				if err := writeJSON(out, items); err != nil {
					return err
				}
			} else {
				w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tDEVICE\tSTATE\tREQUESTED\tBY\tVERSION")
				for _, r := range list {
					state := r.State
					if r.Stage != "" && r.State == db.RestoreRunning {
						state += " (" + r.Stage + ")"
					}
					fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.DeviceName, state, restoreTime(&r.RequestedAt), r.RequestedByName, r.TargetBackupID)
				}
				if err := w.Flush(); err != nil {
					return err
				}
			}
			lf.noteMore(cmd, "restores", next)
			return nil
		},
	}
	fl := cmd.Flags()
	lf.add(fl, "restores", "restore")
	fl.StringVar(&device, "device", "", "only restores of this device (name or ID)")
	fl.BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

func newConfigRestoreStatus(cfg *config.Config) *cobra.Command {
	var asJSON, transcript, reveal bool
	var color string
	cmd := &cobra.Command{
		Use:   "restore-status ID [--json] [--transcript]",
		Short: "Show a restore: its state and stage, who asked and decided, its outcome, and the preview's diff",
		Long: `Show restore ID: its state (and stage while it runs), what the state means,
who asked for it and who decided, the backups it took, how it ended and
why, and its preview: the unified diff from the device's configuration at
the preview to the version, which is what the restore changes. The diff
is printed as config diff prints it (lines the noise rules ignore are
dimmed on a terminal; a restore does not need to change them).

--transcript adds the session with the device, as it was recorded: the
login password and the configuration's secrets masked, whatever --reveal
says. --json prints one object (the fields of config restores --json,
then preview and, with --transcript, transcript).

` + configSecretsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := restoreID(args[0])
			if err != nil {
				return err
			}
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
			r, err := store.Restore(ctx, id)
			if err != nil {
				return restoreRefusal(id, "shown", err)
			}
			st := restoreStatusJSON{restoreJSON: toRestoreJSON(r)}
			var diff backup.DiffResult
			if r.PreviewBackupID != nil {
				st.Preview, diff, err = restorePreview(ctx, cmd, cfg, store, r, reveal)
				if err != nil {
					return err
				}
			}
			if transcript {
				segs, truncated, err := store.RestoreTranscript(ctx, id)
				if err != nil {
					return err
				}
				if segs == nil {
					segs = []db.TranscriptSegment{}
				}
				st.Transcript, st.TranscriptTruncated = &segs, truncated
			} else {
				st.TranscriptTruncated = r.TranscriptTruncated
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), st)
			}
			return writeRestoreStatus(ctx, cmd.OutOrStdout(), store, r, st, diff, useColor)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.BoolVar(&transcript, "transcript", false, "add the session with the device (secrets masked)")
	f.BoolVar(&reveal, "reveal", false, "print the preview's secrets in clear text (the data directory's owner only; audited)")
	f.StringVar(&color, "color", "auto", "colour the diff: auto (on a terminal, unless NO_COLOR is set), always or never")
	return cmd
}

// listFlags are the flags of the lists of requests, config restores
// and config pushes, newest first: --state keeps some states ("open"
// standing for those not yet ended), --limit bounds a page (1 to 500),
// and --before the ID the next page starts below, which the note after a
// full page names.
type listFlags struct {
	states []string
	limit  int
	before int64
}

// add registers --state, --limit and --before on fl; plural and one
// name the rows ("restores", "restore").
func (l *listFlags) add(fl *pflag.FlagSet, plural, one string) {
	fl.StringSliceVar(&l.states, "state", nil, "only "+plural+" in these states (open: every state not yet ended)")
	fl.IntVar(&l.limit, "limit", 50, "list at most this many (up to 500)")
	fl.Int64Var(&l.before, "before", 0, "list the "+plural+" older than this "+one+" `ID` (the next page)")
}

// read refuses a --limit or a --before out of range (one names a row)
// and returns the states --state keeps: each one of known, or those of
// open; nil when none is given.
func (l *listFlags) read(one string, known, open []string) ([]string, error) {
	if l.limit < 1 || l.limit > 500 {
		return nil, errors.New("--limit must be 1 to 500")
	}
	if l.before < 0 {
		return nil, errors.New("--before: want a " + one + " ID")
	}
	var out []string
	for _, s := range l.states {
		s = strings.TrimSpace(s)
		switch {
		case s == "open":
			out = append(out, open...)
		case slices.Contains(known, s):
			out = append(out, s)
		default:
			return nil, fmt.Errorf("--state %q: want open or one of %s", s, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// noteMore tells, on standard error, how to list the page after one that
// stopped at next (0: nothing more).
func (l *listFlags) noteMore(cmd *cobra.Command, plural string, next int64) {
	if next > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: more %s; --before %d lists the next ones\n", plural, next)
	}
}

// restorePreview is r's preview diff, masked as config diff masks.
func restorePreview(ctx context.Context, cmd *cobra.Command, cfg *config.Config, store *db.Store, r db.Restore, reveal bool) (*previewJSON, backup.DiffResult, error) {
	p := &previewJSON{Backup: *r.PreviewBackupID}
	rules, err := store.NoiseRules(ctx)
	if err != nil {
		return nil, backup.DiffResult{}, err
	}
	keys, err := configKeys(cmd, cfg, store, reveal, map[string]any{"device_id": r.DeviceID, "command": "config restore-status",
		"restore_id": r.ID, "from": p.Backup, "to": r.TargetBackupID})
	if err != nil {
		return nil, backup.DiffResult{}, err
	}
	res, err := backup.DiffMasked(ctx, store, p.Backup, r.TargetBackupID, rules, keys)
	var bad *backup.NoiseRuleError
	if errors.As(err, &bad) {
		fmt.Fprintf(cmd.ErrOrStderr(), "warning: your noise rules cannot be used (%v); only the built-in ones are applied\n", bad)
		res, err = backup.DiffMasked(ctx, store, p.Backup, r.TargetBackupID, nil, keys)
	}
	switch {
	case errors.Is(err, db.ErrNotFound), errors.Is(err, backup.ErrNoSnapshot):
		// An ended restore's backups are the retention's like any
		// other; the record outlives them.
		p.Unavailable = "the preview's backup or the version is no longer stored"
		return p, backup.DiffResult{}, nil
	case err != nil:
		return nil, backup.DiffResult{}, err
	}
	p.Diff, p.Added, p.Removed, p.Noise = res.Unified, res.Added, res.Removed, res.NoiseAdded+res.NoiseRemoved
	return p, res, nil
}

// restoreMeaning says what a restore's state means for its device.
var restoreMeaning = map[string]string{
	db.RestorePreviewing: "the running server takes a fresh backup of the device for the preview; nothing is sent to the device",
	db.RestorePending:    "the preview below is ready; the restore waits for approval",
	db.RestoreApproved:   "approved; the running server queues it as soon as the device is free",
	db.RestoreQueued:     "queued; the running server runs it as soon as a worker is free",
	db.RestoreRunning:    "running",
	db.RestoreSucceeded:  "the device runs the version: a backup taken right after the change equals it",
	db.RestoreRolledBack: "the change failed or did not verify; the configuration from before was put back, and a backup verified it",
	db.RestoreRollbackFailed: "the change failed and putting the configuration back failed too: the device's state is NOT KNOWN. " +
		"Back the device up now and look at what it runs",
	db.RestoreFailed: "it failed; the error says at which step (before the change the device is left as it was)",
	db.RestoreInterrupted: "the process running it stopped in the middle: the device's state is NOT KNOWN, and the restore never " +
		"runs again on its own. Back the device up now and look at what it runs",
	db.RestoreRejected:  "rejected; it never ran",
	db.RestoreCancelled: "cancelled; it never ran",
	db.RestoreExpired:   "expired: it was not approved, or could not start, in time; it never ran",
}

// writeRestoreStatus prints the text form of config restore-status.
func writeRestoreStatus(ctx context.Context, w io.Writer, store *db.Store, r db.Restore, st restoreStatusJSON, diff backup.DiffResult, color bool) error {
	out := bufio.NewWriter(w)
	fmt.Fprintf(out, "restore %d of %s: %s\n", r.ID, r.DeviceName, r.State)
	meaning := restoreMeaning[r.State]
	if r.State == db.RestoreRunning && r.Stage != "" {
		meaning += ", at the step " + r.Stage
	}
	if meaning != "" {
		fmt.Fprintf(out, "  %s\n", meaning)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, a...)...) }
	row("device", "%s (ID %d)", r.DeviceName, r.DeviceID)
	version := r.TargetBackupID
	if b, err := store.GetBackup(ctx, r.TargetBackupID); err == nil {
		version += " (backed up " + b.StartedAt.UTC().Format(timeRFC3339) + ")"
	}
	row("version", "%s", version)
	row("method", "%s", r.Method)
	if r.Lines != nil {
		row("merge", "%s", mergeLabel(len(r.Lines)))
		row("lines", "%s", lineRanges(r.Lines))
	}
	requested := restoreTime(&r.RequestedAt) + " by " + r.RequestedByName
	if r.Reason != "" {
		requested += ": " + r.Reason
	}
	row("requested", "%s", oneLine(requested))
	if r.DecidedAt != nil {
		what := "decided"
		switch r.State {
		case db.RestoreRejected:
			what = "rejected"
		case db.RestoreApproved, db.RestoreQueued, db.RestoreRunning, db.RestoreSucceeded, db.RestoreRolledBack,
			db.RestoreRollbackFailed, db.RestoreFailed, db.RestoreInterrupted:
			what = "approved"
		}
		decided := restoreTime(r.DecidedAt) + " by " + deref(r.DecidedByName)
		if r.DecisionNote != "" {
			decided += ": " + r.DecisionNote
		}
		row(what, "%s", oneLine(decided))
	}
	if r.ExpiresAt != nil && r.Open() {
		row("expires", "%s", restoreTime(r.ExpiresAt))
	}
	if r.StartedAt != nil {
		row("started", "%s", restoreTime(r.StartedAt))
	}
	if r.FinishedAt != nil {
		row("finished", "%s", restoreTime(r.FinishedAt))
	}
	if r.JobID != nil {
		row("job", "%d", *r.JobID)
	}
	var backups []string
	for _, b := range []struct {
		name string
		id   *string
	}{{"preview", r.PreviewBackupID}, {"before", r.PreBackupID}, {"after", r.PostBackupID}, {"rollback", r.RollbackBackupID}} {
		if b.id != nil {
			backups = append(backups, b.name+" "+*b.id)
		}
	}
	if len(backups) > 0 {
		row("backups", "%s", strings.Join(backups, ", "))
	}
	if o := outcomeText(r.Outcome); o != "" {
		row("outcome", "%s", o)
	}
	if r.Error != nil {
		e := *r.Error
		if r.ErrorReason != nil {
			e += " (" + *r.ErrorReason + ")"
		}
		row("error", "%s", oneLine(e))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if p := st.Preview; p != nil {
		switch {
		case p.Unavailable != "":
			fmt.Fprintf(out, "\nPreview: %s.\n", p.Unavailable)
		case diff.Unified == "":
			fmt.Fprintln(out, "\nPreview: the device's configuration at the preview equals the version; the restore changes nothing.")
		default:
			fmt.Fprintf(out, "\nPreview: what the restore changes (the device's configuration at the preview → the version), %d line(s) removed, %d added",
				p.Removed, p.Added)
			if p.Noise > 0 {
				fmt.Fprintf(out, ", %d of them noise", p.Noise)
			}
			fmt.Fprintln(out, ":")
			writeDiff(out, diff, color, false)
		}
	} else if r.State == db.RestorePreviewing {
		fmt.Fprintln(out, "\nPreview: not ready yet.")
	}
	if st.Transcript != nil {
		fmt.Fprintln(out, "\nSession with the device (secrets masked):")
		writeTranscript(out, *st.Transcript)
		if st.TranscriptTruncated {
			fmt.Fprintln(out, "[the session said more than is kept; the rest is left out]")
		}
	}
	return out.Flush()
}

// outcomeText says in words what a run's outcome records.
func outcomeText(raw *string) string {
	if raw == nil {
		return ""
	}
	var o struct {
		Passes           int  `json:"passes"`
		Skipped          int  `json:"skipped"`
		Already          bool `json:"already"`
		Verified         bool `json:"verified"`
		Differences      int  `json:"differences"`
		RolledBack       bool `json:"rolled_back"`
		RollbackVerified bool `json:"rollback_verified"`
	}
	if json.Unmarshal([]byte(*raw), &o) != nil {
		return ""
	}
	var parts []string
	if o.Already {
		parts = append(parts, "the device held the version already, nothing was sent")
	} else if o.Verified {
		parts = append(parts, "verified")
	}
	if o.Passes > 0 {
		parts = append(parts, fmt.Sprintf("%d pass(es)", o.Passes))
	}
	if o.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d line(s) the method leaves as they are", o.Skipped))
	}
	if o.Differences > 0 {
		parts = append(parts, fmt.Sprintf("%d line(s) differed after the change", o.Differences))
	}
	if o.RolledBack {
		if o.RollbackVerified {
			parts = append(parts, "put back, verified")
		} else {
			parts = append(parts, "put back, not verified")
		}
	}
	return strings.Join(parts, "; ")
}

// writeTranscript prints a session: what was sent after "> ", what the
// device answered as it came, notes after "# ".
func writeTranscript(w io.Writer, segs []db.TranscriptSegment) {
	for _, s := range segs {
		prefix := ""
		switch s.Kind {
		case "sent":
			prefix = "> "
		case "note":
			prefix = "# "
		}
		text := strings.TrimSuffix(s.Text, "\n")
		if prefix == "" {
			fmt.Fprintln(w, text)
			continue
		}
		for l := range strings.SplitSeq(text, "\n") {
			fmt.Fprintln(w, prefix+l)
		}
	}
}

// oneLine keeps a value on its row: line breaks become spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", " ")), " ")
}

// writeJSON prints v as indented JSON with a final newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// A masked secret stays <secret:3f9a1c>, as the text output shows it.
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// lineRanges writes sorted line numbers as ranges: "3, 7-9".
func lineRanges(lines []int) string {
	var parts []string
	for i := 0; i < len(lines); {
		j := i
		for j+1 < len(lines) && lines[j+1] == lines[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", lines[i], lines[j]))
		} else {
			parts = append(parts, strconv.Itoa(lines[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
