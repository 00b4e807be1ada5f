package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/redact"
	"backupd/app/restore"
	"backupd/db"
)

// The reading change-set commands: config pushes and config
// push-status. They open the store read-only, as restores and
// restore-status do, so they work while the server runs.

// changeSetJSON is one change set as --json prints it. Its fields are a
// contract: scripts read them, so they are only ever added to.
type changeSetJSON struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	State string `json:"state"`
	// Kind is snippet or template.
	Kind              string  `json:"kind"`
	Devices           int     `json:"devices"`
	Counts            counts  `json:"counts"`
	Concurrency       int     `json:"concurrency"`
	StopAfterFailures int     `json:"stop_after_failures"`
	CreatedBy         string  `json:"created_by"`
	CreatedAt         string  `json:"created_at"`
	DecidedBy         *string `json:"decided_by"`
	DecidedAt         *string `json:"decided_at"`
	DecisionNote      string  `json:"decision_note"`
	ExpiresAt         *string `json:"expires_at"`
	StartedAt         *string `json:"started_at"`
	FinishedAt        *string `json:"finished_at"`
	// Error says why the set stopped or was cancelled.
	Error *string `json:"error"`
}

// counts is how many of a set's devices are in each target state, every
// state present (0 when none).
type counts map[string]int

// changeSetStatusJSON is config push-status --json: the set and each of
// its devices in order.
type changeSetStatusJSON struct {
	changeSetJSON
	Targets []targetJSON `json:"targets"`
}

// targetJSON is one device of a change set.
type targetJSON struct {
	Device restoreDeviceJSON `json:"device"`
	State  string            `json:"state"`
	Stage  string            `json:"stage"`
	// Rendered is what the dry run rendered for the device (secrets
	// masked), null when it could not: RenderError says why.
	Rendered    *string       `json:"rendered"`
	RenderError *string       `json:"render_error"`
	JobID       *int64        `json:"job_id"`
	Backups     targetBackups `json:"backups"`
	StartedAt   *string       `json:"started_at"`
	FinishedAt  *string       `json:"finished_at"`
	Error       *string       `json:"error"`
	ErrorReason *string       `json:"error_reason"`
	// Transcript is the device's session (secrets masked), only for the
	// device --transcript names.
	Transcript          *[]db.TranscriptSegment `json:"transcript,omitempty"`
	TranscriptTruncated bool                    `json:"transcript_truncated"`
}

// targetBackups are the backups a device's push took.
type targetBackups struct {
	Before *string `json:"before"`
	After  *string `json:"after"`
}

func toChangeSetJSON(c db.ChangeSet, n map[string]int) changeSetJSON {
	cs := counts{}
	for _, s := range db.TargetStates {
		cs[s] = n[s]
	}
	return changeSetJSON{ID: c.ID, Name: c.Name, State: c.State, Kind: c.Kind, Devices: c.Targets, Counts: cs,
		Concurrency: c.Concurrency, StopAfterFailures: c.StopAfterFailures, CreatedBy: c.CreatedByName,
		CreatedAt: restoreTime(&c.CreatedAt), DecidedBy: c.DecidedByName, DecidedAt: restoreTimePtr(c.DecidedAt),
		DecisionNote: c.DecisionNote, ExpiresAt: restoreTimePtr(c.ExpiresAt), StartedAt: restoreTimePtr(c.StartedAt),
		FinishedAt: restoreTimePtr(c.FinishedAt), Error: c.Error}
}

func newConfigPushes(cfg *config.Config) *cobra.Command {
	var asJSON bool
	var lf listFlags
	cmd := &cobra.Command{
		Use:   "pushes [--state S] [--json]",
		Short: "List change sets, newest first",
		Long: `List change sets, newest first: their ID, name, state, how many devices and
how their pushes stand, who made them and when. --state keeps the sets in
those states (repeatable, or comma-separated; "open" stands for every
state of a set not yet ended). --limit (at most 500) bounds the list;
--before ID lists those older than that set, for the next page. --json
prints an array of objects (the fields of config push-status --json,
without targets).

States: ` + strings.Join(db.ChangeSetStates, ", ") + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			states, err := lf.read("change set", db.ChangeSetStates, db.ChangeSetOpenStates)
			if err != nil {
				return err
			}
			f := db.ChangeSetFilter{States: states, Limit: lf.limit, BeforeID: lf.before}
			ctx := cmd.Context()
			store, err := openConfigStore(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			list, next, err := store.ListChangeSets(ctx, f)
			if err != nil {
				return err
			}
			items := make([]changeSetJSON, 0, len(list))
			for _, c := range list {
				n, err := store.ChangeSetCounts(ctx, c.ID)
				if err != nil {
					return err
				}
				items = append(items, toChangeSetJSON(c, n))
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, items); err != nil {
					return err
				}
			} else {
				w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tNAME\tSTATE\tDEVICES\tCREATED\tBY")
				for _, c := range items {
					fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\n", c.ID, oneLine(c.Name), c.State, countsText(c.Devices, c.Counts), c.CreatedAt, c.CreatedBy)
				}
				if err := w.Flush(); err != nil {
					return err
				}
			}
			lf.noteMore(cmd, "change sets", next)
			return nil
		},
	}
	fl := cmd.Flags()
	lf.add(fl, "change sets", "change set")
	fl.BoolVar(&asJSON, "json", false, "print a JSON array")
	return cmd
}

// countsText says how a set's devices stand: "5" before any ran, "5: 3
// succeeded, 1 failed, 1 running" after.
func countsText(total int, c counts) string {
	var parts []string
	for _, s := range db.TargetStates {
		if s != db.TargetPending && c[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c[s], s))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprint(total)
	}
	return fmt.Sprintf("%d: %s", total, strings.Join(parts, ", "))
}

func newConfigPushStatus(cfg *config.Config, byName *bool) *cobra.Command {
	var asJSON, reveal bool
	var transcript string
	cmd := &cobra.Command{
		Use:   "push-status ID [--json] [--transcript DEVICE]",
		Short: "Show a change set: its state, each device's push, and the dry run's lines",
		Long: `Show change set ID: its state and what it means, who made and decided it,
its concurrency and stop-after, then each device in order: the state of
its push (and the step while it runs: apply, then verify, the backup
after), why it failed (the line the device refused and its answer), and
the backups taken before and after; then the dry run: the lines each
device is sent, or why it cannot be.

--transcript DEVICE adds the session with that device (name or ID), as
it was recorded: the login password and the configuration's secrets
masked, whatever --reveal says. --json prints one object (the fields of
config pushes --json, then targets; the device --transcript names has
its transcript).

` + configSecretsHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := changeSetID(args[0])
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			store, err := openConfigStore(cmd, cfg)
			if err != nil {
				return err
			}
			defer store.Close()
			c, err := store.ChangeSet(ctx, id)
			if err != nil {
				return changeSetRefusal(id, "shown", err)
			}
			targets, err := store.ChangeSetTargets(ctx, id)
			if err != nil {
				return err
			}
			n, err := store.ChangeSetCounts(ctx, id)
			if err != nil {
				return err
			}
			shown := int64(0)
			if transcript != "" {
				d, err := resolveDevice(ctx, store, transcript, *byName)
				if err != nil {
					return fmt.Errorf("--transcript: %w", err)
				}
				if !slices.ContainsFunc(targets, func(t db.ChangeSetTarget) bool { return t.DeviceID == d.ID }) {
					return fmt.Errorf("--transcript: device %s (ID %d) is not a device of change set %d", d.Name, d.ID, id)
				}
				shown = d.ID
			}
			keys, err := configKeys(cmd, cfg, store, reveal, map[string]any{"device_id": "", "command": "config push-status", "change_set_id": id})
			if err != nil {
				return err
			}
			st := changeSetStatusJSON{changeSetJSON: toChangeSetJSON(c, n), Targets: make([]targetJSON, 0, len(targets))}
			for _, t := range targets {
				tj, err := toTargetJSON(ctx, store, keys, t)
				if err != nil {
					return err
				}
				if t.DeviceID == shown {
					segs, truncated, err := store.ChangeSetTargetTranscript(ctx, t.ID)
					if err != nil {
						return err
					}
					if segs == nil {
						segs = []db.TranscriptSegment{}
					}
					tj.Transcript, tj.TranscriptTruncated = &segs, truncated
				}
				st.Targets = append(st.Targets, tj)
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), st)
			}
			return writePushStatus(cmd.OutOrStdout(), c, st)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print one JSON object")
	f.StringVar(&transcript, "transcript", "", "add the session with this `DEVICE` (name or ID; secrets masked)")
	f.BoolVar(&reveal, "reveal", false, "print the dry run's secrets in clear text (the data directory's owner only; audited)")
	return cmd
}

func toTargetJSON(ctx context.Context, store *db.Store, keys *redact.Keyring, t db.ChangeSetTarget) (targetJSON, error) {
	tj := targetJSON{Device: restoreDeviceJSON{ID: t.DeviceID, Name: t.DeviceName}, State: t.State, Stage: t.Stage,
		RenderError: t.RenderError, JobID: t.JobID, Backups: targetBackups{Before: t.PreBackupID, After: t.PostBackupID},
		StartedAt: restoreTimePtr(t.StartedAt), FinishedAt: restoreTimePtr(t.FinishedAt), Error: t.Error, ErrorReason: t.ErrorReason,
		TranscriptTruncated: t.TranscriptTruncated}
	if t.Rendered != nil {
		text, err := maskRendered(ctx, store, keys, t)
		if err != nil {
			return tj, err
		}
		tj.Rendered = &text
	}
	return tj, nil
}

// changeSetMeaning says what a change set's state means for its devices.
var changeSetMeaning = map[string]string{
	db.ChangeSetDraft:     "a device cannot be pushed (see the dry run below): it cannot be approved; withdraw it and push again without that device",
	db.ChangeSetReady:     "the dry run below is ready; the set waits for approval. Nothing was sent to any device",
	db.ChangeSetApproved:  "approved; the running server (backupd serve) starts it",
	db.ChangeSetRunning:   "running: the running server pushes its devices, a few at a time",
	db.ChangeSetDone:      "every device ran; each device's state says how its push went",
	db.ChangeSetStopped:   "it stopped after too many failed devices; the devices not started were skipped",
	db.ChangeSetCancelled: "cancelled; its devices not started were skipped",
	db.ChangeSetExpired:   "expired: it was not approved, or could not start, in time; nothing was sent",
}

// writePushStatus prints the text form of config push-status.
func writePushStatus(w io.Writer, c db.ChangeSet, st changeSetStatusJSON) error {
	out := bufio.NewWriter(w)
	fmt.Fprintf(out, "change set %d %q: %s\n", c.ID, oneLine(c.Name), c.State)
	rejected := restore.Rejected(c)
	if m := changeSetMeaning[c.State]; rejected {
		fmt.Fprintf(out, "  rejected: it never ran; its devices were skipped\n")
	} else if m != "" {
		fmt.Fprintf(out, "  %s\n", m)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	row := func(k, format string, a ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, a...)...) }
	row("kind", "%s", c.Kind)
	row("devices", "%s", countsText(st.Devices, st.Counts))
	stop := "never"
	if c.StopAfterFailures > 0 {
		stop = fmt.Sprintf("after %d failed device(s)", c.StopAfterFailures)
	}
	row("concurrency", "%d at a time, stop %s", c.Concurrency, stop)
	row("created", "%s by %s", st.CreatedAt, c.CreatedByName)
	if c.DecidedAt != nil {
		decided := *st.DecidedAt + " by " + deref(c.DecidedByName)
		if c.DecisionNote != "" {
			decided += ": " + c.DecisionNote
		}
		what := "approved"
		switch {
		case rejected:
			what = "rejected"
		case c.State == db.ChangeSetCancelled:
			what = "decided"
		}
		row(what, "%s", oneLine(decided))
	}
	if c.ExpiresAt != nil && (c.State == db.ChangeSetReady || c.State == db.ChangeSetApproved) {
		row("expires", "%s", *st.ExpiresAt)
	}
	if c.StartedAt != nil {
		row("started", "%s", *st.StartedAt)
	}
	if c.FinishedAt != nil {
		row("finished", "%s", *st.FinishedAt)
	}
	if c.Error != nil {
		row("why", "%s", oneLine(*c.Error))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(out, "\nDevices:")
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tSTATE\tSTAGE\tBEFORE\tAFTER\tERROR")
	for _, t := range st.Targets {
		e := ""
		switch {
		case t.Error != nil:
			e = *t.Error
			if t.ErrorReason != nil {
				e += " (" + *t.ErrorReason + ")"
			}
		case t.RenderError != nil:
			e = "cannot be pushed: " + strings.TrimPrefix(*t.RenderError, t.Device.Name+": ")
		}
		// The stage is the step of a running push; an ended one keeps
		// its last, which says nothing more than its state.
		stage := ""
		if t.State == db.TargetRunning {
			stage = t.Stage
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Device.Name, t.State, dash(stage), dash(deref(t.Backups.Before)),
			dash(deref(t.Backups.After)), oneLine(e))
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	fmt.Fprintln(out, "\nDry run: the lines each device is sent (secrets masked unless --reveal):")
	writeDryRun(out, st.Targets)
	for _, t := range st.Targets {
		if t.Transcript == nil {
			continue
		}
		fmt.Fprintf(out, "\nSession with %s (secrets masked):\n", t.Device.Name)
		if len(*t.Transcript) == 0 {
			fmt.Fprintln(out, "[no session recorded: the device was not pushed yet, or its push stopped before logging in]")
		}
		writeTranscript(out, *t.Transcript)
		if t.TranscriptTruncated {
			fmt.Fprintln(out, "[the session said more than is kept; the rest is left out]")
		}
	}
	return out.Flush()
}

// writeDryRun prints what each device would be sent, or why it cannot
// be pushed.
func writeDryRun(out io.Writer, targets []targetJSON) {
	for _, t := range targets {
		switch {
		case t.Rendered != nil:
			lines := strings.Split(strings.TrimSuffix(*t.Rendered, "\n"), "\n")
			fmt.Fprintf(out, "%s (ID %d): %d line(s)\n", t.Device.Name, t.Device.ID, len(lines))
			for _, l := range lines {
				fmt.Fprintf(out, "  | %s\n", l)
			}
		case t.RenderError != nil:
			fmt.Fprintf(out, "%s (ID %d): cannot be pushed: %s\n", t.Device.Name, t.Device.ID, strings.TrimPrefix(*t.RenderError, t.Device.Name+": "))
		default:
			fmt.Fprintf(out, "%s (ID %d): no dry run yet\n", t.Device.Name, t.Device.ID)
		}
	}
}

// dash stands for an empty cell.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
