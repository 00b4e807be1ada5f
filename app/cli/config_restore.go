package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"backupd/app/backup"
	"backupd/app/config"
	"backupd/app/redact"
	"backupd/app/restore"
	"backupd/db"
)

// The restore commands of `backupd config`. A restore is asked for here
// (or in the web interface) and decided here or there; the server
// (backupd serve) does the rest: its leader takes the fresh backup the
// preview compares with and queues an approved restore once the device
// is free, and its engine runs it. These commands only record requests
// and decisions in the store, and read how they went.

// restoreServerHelp is what the restore commands' help says of the
// server.
const restoreServerHelp = `The running server (backupd serve) does the work: it takes the fresh backup
the preview compares with, queues an approved restore as soon as the
device is free, and runs it (backup, check that the device still holds
what the preview showed, apply with the platform's method, back up again
and compare, keep or put back). Without a running server a request waits.`

func newConfigRestore(cfg *config.Config, byName *bool) *cobra.Command {
	var version, reason string
	var lineFlags []string
	cmd := &cobra.Command{
		Use:   "restore DEVICE --version ID [--line N|N-M ...] [--reason TEXT]",
		Short: "Ask for a device to be put back on one of its stored versions (previewed, approved, then run by the server)",
		Long: `Ask for DEVICE to be put back on the version --version names (a backup ID,
as config show --version takes it). Nothing is sent to the device yet: the
request gets a preview (what the restore would change, from the device's
configuration now to the version), then waits for an approval
(config restore-approve, or the restore's page in the web interface).

` + restoreServerHelp + `

Refused, with nothing recorded: a platform without a restore method (see
docs/restore.md), a version of another device or one that holds no
configuration, a disabled device or one behind a remote collector, a
device with a restore still open. With four eyes on, a request from the
command line is approved by a person signed in to the web interface, never
from the command line.

On a platform without a safe full replace (method merge_lines: classic
IOS, NX-OS) a restore is a merge, NOT a full replace: --line names the
lines of the version to send (by their number in config show --version,
"--line 12 --line 40-52"); each goes after its parent lines (by
indentation). Lines not selected, and lines the device has that the
version lacks, stay as they are. Blank lines and comments in a range are
left out. --line is required there and refused on a platform that
replaces the whole configuration.

The request is written to the audit log. It prints the restore's ID and
the commands that follow it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(version) == "" {
				return errors.New("--version: name the version to put back (a backup ID, as config show --version takes it)")
			}
			lines, err := parseLineFlags(lineFlags)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			rc, err := openRestoreCLI(cmd, cfg)
			if err != nil {
				return err
			}
			defer rc.store.Close()
			d, err := resolveDevice(ctx, rc.store, args[0], *byName)
			if err != nil {
				return err
			}
			b, err := deviceVersion(ctx, rc.store, d, version)
			if err != nil {
				return fmt.Errorf("--version: %w", err)
			}
			if open, err := rc.store.OpenRestore(ctx, d.ID); err == nil {
				return openRestoreError(d, open.ID, open.State)
			} else if !errors.Is(err, db.ErrNotFound) {
				return err
			}
			r, err := rc.svc.Request(ctx, cliRestoreActor(), d.ID, b.ID, reason, lines)
			if err != nil {
				return requestError(d, err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "restore %d requested: %s (ID %d) back to its version of %s (%s), method %s\n",
				r.ID, d.Name, d.ID, b.StartedAt.UTC().Format(timeRFC3339), b.ID, r.Method)
			if r.Lines != nil {
				fmt.Fprintln(out, mergeLabel(len(r.Lines)))
			}
			fmt.Fprintf(out, "The running server (backupd serve) now takes a fresh backup of %s for the preview; "+
				"nothing is sent to the device before the restore is approved.\n", d.Name)
			fmt.Fprintf(out, "Next:\n"+
				"  backupd config restore-status %d     the preview: what the restore would change on the device\n"+
				"  backupd config restore-approve %d    approve it; the server then runs and verifies it\n"+
				"  backupd config restore-cancel %d     withdraw it\n", r.ID, r.ID, r.ID)
			return nil
		},
	}
	cmd.Flags().StringVar(&version, "version", "", "backup `ID` of the version to put back")
	cmd.Flags().StringVar(&reason, "reason", "", "why, kept with the request and shown to whoever approves it")
	cmd.Flags().StringArrayVar(&lineFlags, "line", nil, "for a merge (merge_lines platforms): a line `N` or range N-M of the version to send; repeat it")
	return cmd
}

// mergeLabel is how a merge restore is named wherever it shows.
func mergeLabel(n int) string {
	return fmt.Sprintf("Merge of %d selected lines — not a full replace: lines not selected and lines the device has "+
		"that the version lacks are left as they are.", n)
}

// parseLineFlags reads --line N and --line N-M.
func parseLineFlags(flags []string) ([]int, error) {
	var out []int
	for _, f := range flags {
		from, to, isRange := strings.Cut(strings.TrimSpace(f), "-")
		a, err := strconv.Atoi(from)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(to)
		}
		switch {
		case err != nil || a < 1 || b < 1:
			return nil, fmt.Errorf("--line %q: want a line number (from 1) or a range N-M", f)
		case b < a:
			return nil, fmt.Errorf("--line %q: the range ends before it starts", f)
		case len(out)+b-a+1 > restore.MaxSelected:
			return nil, fmt.Errorf("--line: at most %d lines", restore.MaxSelected)
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	return out, nil
}

func newConfigRestoreApprove(cfg *config.Config) *cobra.Command {
	var preview, note string
	cmd := &cobra.Command{
		Use:   "restore-approve ID [--preview BACKUP_ID] [--note TEXT]",
		Short: "Approve a restore whose preview you looked at; the server then runs it",
		Long: `Approve restore ID as its preview shows it (config restore-status ID). With
--preview, the approval holds only if the preview is still that backup: a
stale preview is refused. The server then queues the restore as soon as
the device is free and runs it; follow it with config restore-status.

With four eyes on (config restore-settings), someone other than the
requester must approve, signed in: approvals then come from a person in
the web interface, never from the command line.

A request not approved in time expires (config restore-settings
--pending-hours). The approval is written to the audit log.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decideOn(cmd, cfg, args[0], restoreID, func(ctx context.Context, rc *restoreCLI, id int64) error {
				r, err := rc.store.Restore(ctx, id)
				if err != nil {
					return restoreRefusal(id, "approved", err)
				}
				if r.State == db.RestorePreviewing {
					return fmt.Errorf("restore %d has no preview yet: the server is taking the device's backup for it; "+
						"look at it with config restore-status %d, then approve", id, id)
				}
				if preview != "" && (r.PreviewBackupID == nil || *r.PreviewBackupID != preview) {
					return fmt.Errorf("--preview %s: %w (restore %d's preview is backup %s; config restore-status %d shows it)",
						preview, db.ErrPreviewStale, id, deref(r.PreviewBackupID), id)
				}
				r, err = rc.svc.Approve(ctx, cliRestoreActor(), id, deref(r.PreviewHash), note)
				if err != nil {
					return restoreRefusal(id, "approved", err)
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "restore %d of %s approved\n", r.ID, r.DeviceName)
				if r.State == db.RestoreQueued {
					fmt.Fprintln(out, "It is queued: the running server (backupd serve) runs it as soon as a worker is free.")
				} else {
					fmt.Fprintf(out, "The device is busy; the running server queues the restore once it is free (until %s).\n", restoreTime(r.ExpiresAt))
				}
				fmt.Fprintf(out, "Follow it with: backupd config restore-status %d\n", r.ID)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&preview, "preview", "", "approve only if the preview is still this backup `ID` (restore-status shows it)")
	cmd.Flags().StringVar(&note, "note", "", "a note kept with the decision")
	return cmd
}

func newConfigRestoreReject(cfg *config.Config) *cobra.Command {
	var note string
	cmd := &cobra.Command{
		Use:   "restore-reject ID [--note TEXT]",
		Short: "Refuse a restore waiting for approval, or approved and not yet queued",
		Long: `Refuse restore ID: it never runs. A restore already queued is withdrawn with
config restore-cancel instead. The decision is written to the audit log.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decideOn(cmd, cfg, args[0], restoreID, func(ctx context.Context, rc *restoreCLI, id int64) error {
				r, err := rc.svc.Reject(ctx, cliRestoreActor(), id, note)
				if err != nil {
					return restoreRefusal(id, "rejected", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "restore %d of %s rejected; it never runs\n", r.ID, r.DeviceName)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "a note kept with the decision (why)")
	return cmd
}

func newConfigRestoreCancel(cfg *config.Config) *cobra.Command {
	return &cobra.Command{
		Use:   "restore-cancel ID",
		Short: "Withdraw a restore that has not started",
		Long: `Withdraw restore ID while it has not started: previewing, waiting for
approval, approved or queued. A running restore is not stopped: it ends on
its own, and puts the device back when the change fails. Written to the
audit log.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decideOn(cmd, cfg, args[0], restoreID, func(ctx context.Context, rc *restoreCLI, id int64) error {
				r, err := rc.svc.Cancel(ctx, cliRestoreActor(), id)
				if err != nil {
					return restoreRefusal(id, "cancelled", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "restore %d of %s cancelled; it never runs\n", r.ID, r.DeviceName)
				return nil
			})
		},
	}
}

func newConfigRestoreSettings(cfg *config.Config) *cobra.Command {
	var fourEyes string
	var pending, approved int
	cmd := &cobra.Command{
		Use:   "restore-settings [--four-eyes on|off] [--pending-hours N] [--approved-hours N]",
		Short: "Show or change the rules of restores: four eyes and the expiries",
		Long: `Without flags, print the rules of restores; with flags, change them (written
to the audit log) and print them:

  --four-eyes on      the requester of a restore cannot approve it; someone
                      else approves, signed in to the web interface
  --pending-hours N   a request not approved within N hours expires
  --approved-hours N  an approved restore that could not start within N
                      hours (its device busy) expires

Hours are ` + strconv.Itoa(restore.MinHours) + ` to ` + strconv.Itoa(restore.MaxHours) + `. The web interface's settings edit the same rules.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			changed := f.Changed("four-eyes") || f.Changed("pending-hours") || f.Changed("approved-hours")
			var eyes bool
			if f.Changed("four-eyes") {
				switch fourEyes {
				case "on":
					eyes = true
				case "off":
				default:
					return fmt.Errorf("--four-eyes %q: want on or off", fourEyes)
				}
			}
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			set, err := restore.LoadSettings(ctx, store)
			if err != nil {
				return err
			}
			if changed {
				if f.Changed("four-eyes") {
					set.FourEyes = eyes
				}
				if f.Changed("pending-hours") {
					set.PendingHours = pending
				}
				if f.Changed("approved-hours") {
					set.ApprovedHours = approved
				}
				if err := restore.SaveSettings(ctx, store, set); err != nil {
					return settingsError(err)
				}
				audit(ctx, store, cmd.ErrOrStderr(), "settings.update", "settings", restore.SettingKey,
					map[string]any{"four_eyes": set.FourEyes, "pending_hours": set.PendingHours, "approved_hours": set.ApprovedHours})
			}
			out := cmd.OutOrStdout()
			who := "off (whoever may approve restores may approve their own)"
			if set.FourEyes {
				who = "on (someone other than the requester approves, signed in to the web interface)"
			}
			fmt.Fprintf(out, "four eyes       %s\n", who)
			fmt.Fprintf(out, "pending hours   %d (a request not approved within them expires)\n", set.PendingHours)
			fmt.Fprintf(out, "approved hours  %d (an approved restore that could not start within them expires)\n", set.ApprovedHours)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&fourEyes, "four-eyes", "", "on: the requester of a restore cannot approve it; off: they can")
	f.IntVar(&pending, "pending-hours", 0, "hours a request waits for approval before it expires")
	f.IntVar(&approved, "approved-hours", 0, "hours an approved restore may wait for its device before it expires")
	return cmd
}

// restoreCLI is what the restore commands that write work with: the
// store and the restore service. Its engine is never run: it queues the
// preview's backup, which the server's engine takes.
type restoreCLI struct {
	store *db.Store
	svc   *restore.Service
}

func openRestoreCLI(cmd *cobra.Command, cfg *config.Config) (*restoreCLI, error) {
	ctx := cmd.Context()
	store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
	if err != nil {
		return nil, err
	}
	logCfg := *cfg
	if !cmd.Flags().Changed("log-level") {
		logCfg.LogLevel = "error"
	}
	log := logCfg.Logger(cmd.ErrOrStderr())
	engine := backup.New(store, sealer, log, backup.Options{})
	return &restoreCLI{store: store, svc: &restore.Service{Store: store, Engine: engine, Keys: redact.NewKeyring(sealer), Log: log}}, nil
}

// decideOn runs a command that decides a restore or a change set: it
// reads the ID argument with readID, opens the store and the restore
// service, and hands them to decide with the ID; the store is closed
// after. A bad ID is refused before the data directory is opened.
func decideOn(cmd *cobra.Command, cfg *config.Config, arg string, readID func(string) (int64, error),
	decide func(ctx context.Context, rc *restoreCLI, id int64) error) error {
	id, err := readID(arg)
	if err != nil {
		return err
	}
	rc, err := openRestoreCLI(cmd, cfg)
	if err != nil {
		return err
	}
	defer rc.store.Close()
	return decide(cmd.Context(), rc, id)
}

// cliRestoreActor is the command line as a restore's actor: no user, the
// operating-system account by name, audited with the interface "cli".
func cliRestoreActor() restore.Actor {
	name := cliActor()
	return restore.Actor{Name: name, Audit: func(action string, details map[string]any) *db.AuditEntry {
		return &db.AuditEntry{Username: name, Interface: "cli", Action: action, Details: details}
	}}
}

// restoreID reads a restore ID argument.
func restoreID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("restore ID %q: want a positive number (config restores lists them)", arg)
	}
	return id, nil
}

func openRestoreError(d db.Device, id int64, state string) error {
	if id == 0 {
		return fmt.Errorf("device %s (ID %d) has a restore open already (asked for at this very moment); config restores --device %d shows it",
			d.Name, d.ID, d.ID)
	}
	return fmt.Errorf("device %s (ID %d) has a restore open already: %d (%s); see it with config restore-status %d, or withdraw it with config restore-cancel %d",
		d.Name, d.ID, id, state, id, id)
}

// requestError turns the service's refusal of a request into a sentence
// naming the device, or the flag at fault.
func requestError(d db.Device, err error) error {
	var open *db.ErrOpenRestore
	var field *db.ErrInvalidField
	switch {
	case errors.Is(err, restore.ErrNotSupported):
		return fmt.Errorf("device %s (ID %d): its platform %s cannot restore a configuration (docs/restore.md lists the platforms that can)",
			d.Name, d.ID, d.Platform)
	case errors.Is(err, restore.ErrNoSelection), errors.Is(err, restore.ErrSelectionNotMerge):
		return fmt.Errorf("--line: device %s (ID %d, %s): %w", d.Name, d.ID, d.Platform, err)
	case errors.Is(err, restore.ErrRemoteZone), errors.Is(err, restore.ErrDisabled), errors.Is(err, restore.ErrMaskedVersion), errors.Is(err, restore.ErrBusy):
		return fmt.Errorf("device %s (ID %d): %w", d.Name, d.ID, err)
	case errors.As(err, &open):
		return openRestoreError(d, open.ID, open.State)
	case errors.As(err, &field):
		return fieldError(field)
	}
	return err
}

// restoreRefusal turns the store's or the service's refusal of a
// decision on restore id into a sentence; action is what was refused
// ("approved", "rejected", "cancelled").
func restoreRefusal(id int64, action string, err error) error {
	var state *db.ErrRestoreState
	var field *db.ErrInvalidField
	switch {
	case errors.Is(err, db.ErrNotFound):
		return fmt.Errorf("no restore with the ID %d (config restores lists them)", id)
	case errors.Is(err, restore.ErrFourEyes):
		return fmt.Errorf("restore %d: four eyes are on, so someone other than the requester must approve it, signed in: "+
			"approvals then come from a person in the web interface, not from the command line", id)
	case errors.Is(err, db.ErrRestoreExpired):
		return fmt.Errorf("restore %d expired: it was not approved, or could not start, in time; ask for it again", id)
	case errors.Is(err, db.ErrPreviewStale):
		return fmt.Errorf("restore %d: %w (config restore-status %d)", id, err, id)
	case errors.As(err, &state):
		why := "it ended"
		switch state.Have {
		case db.RestoreRunning:
			why = "it runs already; it ends on its own, and puts the device back if the change fails"
		case db.RestoreQueued, db.RestoreApproved:
			why = "it was approved already"
		case db.RestorePreviewing:
			why = "its preview is not ready"
		case db.RestorePending:
			why = "it waits for approval"
		}
		return fmt.Errorf("restore %d is %s and cannot be %s: %s", id, state.Have, action, why)
	case errors.As(err, &field):
		return fieldError(field)
	}
	return err
}

// fieldError names the flag a refused field came from.
func fieldError(f *db.ErrInvalidField) error {
	flag := map[string]string{"version": "--version", "target_backup_id": "--version", "reason": "--reason", "note": "--note", "lines": "--line"}[f.Field]
	if flag == "" {
		flag = f.Field
	}
	return fmt.Errorf("%s: %s", flag, f.Message)
}

// settingsError names the flag of a refused setting.
func settingsError(err error) error {
	var field *db.ErrInvalidField
	if errors.As(err, &field) {
		return fmt.Errorf("--%s: %s", strings.ReplaceAll(field.Field, "_", "-"), field.Message)
	}
	return err
}

// restoreDevice resolves the --device filter of config restores.
func restoreDevice(ctx context.Context, store *db.Store, arg string, byName bool) (int64, error) {
	if arg == "" {
		return 0, nil
	}
	d, err := resolveDevice(ctx, store, arg, byName)
	if err != nil {
		return 0, fmt.Errorf("--device: %w", err)
	}
	return d.ID, nil
}
