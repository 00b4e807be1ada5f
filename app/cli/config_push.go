package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/redact"
	"backupd/app/restore"
	"backupd/db"
)

// The change-set commands of `backupd config` that write: push (a new
// change set and its dry run), push-approve, push-reject and
// push-cancel. A change
// set sends lines of configuration, or a template rendered per device,
// to many devices. These commands record the set and the decisions on it
// in the store; the running server (backupd serve) pushes an approved
// set's devices a few at a time. Nothing here logs in to a device.

// pushServerHelp is what the change-set commands' help says of the
// server.
const pushServerHelp = `The running server (backupd serve) does the pushing, a few devices at a
time (--concurrency): for each device it takes a backup, sends the lines
in configuration mode, stops at the first line the device refuses (and
keeps the device's answer), saves the configuration, and takes a backup
after with the trigger "push", which the history, the git mirror and the
notifications record as the push. With --stop-after N the set stops once
N devices failed; the devices not started are skipped. Without a running
server an approved set waits.`

// pushVarKey is what a --var KEY may be: a name .Vars.KEY reads.
var pushVarKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func newConfigPush(cfg *config.Config, byName *bool) *cobra.Command {
	var file, body, group string
	var devices, vars []string
	var tmpl bool
	var concurrency, stopAfter int
	cmd := &cobra.Command{
		Use:   "push NAME (--file FILE | --body TEXT) [--template] [--var KEY=VALUE]... (--device DEVICE... | --group GROUP) [--concurrency N] [--stop-after N]",
		Short: "Make a change set: lines to push to many devices, shown per device by a dry run (approved, then run by the server)",
		Long: `Make a change set named NAME: the lines of --file (- for standard input) or
of --body, to be pushed to the devices of --device (repeatable) or to the
enabled devices of --group (a group's name or ID, its subgroups
included). Nothing is sent to a device by this command: it records the
set and runs its dry run, which prints, for each device, the lines it
would be sent, or why it cannot take them (its platform cannot take a
push: FRR, Cisco IOS and NX-OS can today; it is disabled or reached through
a remote collector; a template variable it lacks; on IOS and NX-OS, a
banner or a certificate, which cannot be sent line by line). A set whose every device rendered is ready
for approval (config push-approve, or the change set's page in the web
interface); one with a device that cannot be pushed stays a draft that
cannot be approved: cancel it and push again without that device.

With --template the lines are a Go text/template rendered per device:
{{.Name}}, {{.Host}} and {{.Platform}} are the device's, {{.Vars.KEY}} the
value of --var KEY=VALUE (repeatable). A key the template uses and no
--var gives is that device's dry-run error, never an empty value.

` + pushServerHelp + `

Refused, with nothing recorded: no device, a device that does not exist
or is disabled, a device named twice, a group without enabled devices, a
bad --var, a template that does not parse, a file that is missing, empty,
larger than ` + strconv.Itoa(db.ChangeSetBodyMax>>10) + ` KiB or not UTF-8, a line with a control character.
With four eyes on (config restore-settings), a set made here is approved
by a person signed in to the web interface, never from the command line.

Secrets in the lines are printed masked, as config show masks them. The
set is written to the audit log. It prints the set's ID and the commands
that follow it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if f.Changed("file") == f.Changed("body") {
				return errors.New("say what to push: exactly one of --file FILE (- for standard input) or --body TEXT")
			}
			if (len(devices) > 0) == (group != "") {
				return errors.New("say where to push: --device DEVICE (repeatable) or --group GROUP, not both")
			}
			text := body
			if f.Changed("file") {
				var err error
				if text, err = readPushFile(cmd, file); err != nil {
					return err
				}
			} else if err := checkPushText("--body", text); err != nil {
				return err
			}
			variables, err := pushVars(vars, tmpl)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			rc, err := openRestoreCLI(cmd, cfg)
			if err != nil {
				return err
			}
			defer rc.store.Close()
			ids, err := pushDevices(ctx, rc.store, devices, group, *byName)
			if err != nil {
				return err
			}
			c, err := rc.svc.CreateChangeSet(ctx, cliRestoreActor(), restore.NewChangeSet{Name: args[0], Body: text, Template: tmpl,
				Variables: variables, DeviceIDs: ids, Concurrency: concurrency, StopAfterFailures: stopAfter})
			if err != nil {
				return pushFieldError(err, f.Changed("file"))
			}
			targets, err := rc.store.ChangeSetTargets(ctx, c.ID)
			if err != nil {
				return err
			}
			keys, err := configKeys(cmd, cfg, rc.store, false, nil)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "change set %d %q recorded: %d device(s), %s\n", c.ID, c.Name, c.Targets, c.State)
			fmt.Fprintln(out, "Dry run: what each device would be sent (nothing was sent to any device):")
			tjs := make([]targetJSON, 0, len(targets))
			for _, t := range targets {
				tj, err := toTargetJSON(ctx, rc.store, keys, t)
				if err != nil {
					return err
				}
				tjs = append(tjs, tj)
			}
			bw := bufio.NewWriter(out)
			writeDryRun(bw, tjs)
			if err := bw.Flush(); err != nil {
				return err
			}
			if c.State != db.ChangeSetReady {
				fmt.Fprintf(out, "Change set %d stays a draft and cannot be approved: a device above cannot be pushed.\n"+
					"Withdraw it with backupd config push-cancel %d, and push again without those devices (or with the --var they lack).\n", c.ID, c.ID)
				return nil
			}
			set, err := restore.LoadSettings(ctx, rc.store)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "Change set %d is ready for approval. Next:\n", c.ID)
			fmt.Fprintf(out, "  backupd config push-status %d     the dry run again, then the progress of each device\n", c.ID)
			if set.FourEyes {
				fmt.Fprintf(out, "  four eyes are on: a person signed in to the web interface approves it (Change sets, set %d)\n", c.ID)
			} else {
				fmt.Fprintf(out, "  backupd config push-approve %d    approve it; the running server then pushes it\n", c.ID)
			}
			fmt.Fprintf(out, "  backupd config push-cancel %d     withdraw it\n", c.ID)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&file, "file", "", "read the lines from `FILE` (- for standard input)")
	fl.StringVar(&body, "body", "", "the lines to push (several lines in one argument: $'router bgp 1\\n neighbor …' in bash)")
	fl.BoolVar(&tmpl, "template", false, "render the lines per device as a Go text/template ({{.Name}}, {{.Host}}, {{.Platform}}, {{.Vars.KEY}})")
	fl.StringArrayVar(&vars, "var", nil, "a template variable, `KEY=VALUE` (repeatable; .Vars.KEY reads it)")
	fl.StringArrayVar(&devices, "device", nil, "a device to push to, by name or ID (repeatable)")
	fl.StringVar(&group, "group", "", "push to the enabled devices of this group (name or ID) and its subgroups")
	fl.IntVar(&concurrency, "concurrency", 1, "devices pushed at once (1 to "+strconv.Itoa(restore.MaxConcurrency)+")")
	fl.IntVar(&stopAfter, "stop-after", 1, "stop the set once this many devices failed (0: never)")
	return cmd
}

func newConfigPushApprove(cfg *config.Config) *cobra.Command {
	var note string
	cmd := &cobra.Command{
		Use:   "push-approve ID [--note TEXT]",
		Short: "Approve a change set whose dry run you looked at; the server then pushes it",
		Long: `Approve change set ID as its dry run shows it (config push-status ID). It
then runs: the running server pushes its devices a few at a time; follow
it with config push-status. Only a ready set is approved: a draft (a
device that cannot be pushed) never is.

With four eyes on (config restore-settings; change sets follow the rules
of restores), someone other than the person who made the set must
approve, signed in: approvals then come from a person in the web
interface (Change sets), never from the command line.

` + pushServerHelp + `

The approval is written to the audit log.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decideOn(cmd, cfg, args[0], changeSetID, func(ctx context.Context, rc *restoreCLI, id int64) error {
				c, err := rc.svc.ApproveChangeSet(ctx, cliRestoreActor(), id, note)
				if err != nil {
					return changeSetRefusal(id, "approved", err)
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "change set %d %q approved; it is %s\n", c.ID, c.Name, c.State)
				fmt.Fprintf(out, "The running server (backupd serve) pushes its %d device(s), %d at a time.\n", c.Targets, c.Concurrency)
				fmt.Fprintf(out, "Follow it with: backupd config push-status %d\n", c.ID)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "a note kept with the decision")
	return cmd
}

func newConfigPushReject(cfg *config.Config) *cobra.Command {
	var note string
	cmd := &cobra.Command{
		Use:   "push-reject ID [--note TEXT]",
		Short: "Refuse a change set waiting for approval: it never runs",
		Long: `Refuse change set ID, ready (waiting for approval) or approved and not yet
started: it is cancelled, its devices are skipped and nothing is sent to
any of them. The decision, with --note, is kept with the set (config
push-status shows who rejected it and why), told by the notification
config.push_finished, and written to the audit log. Four eyes do not
apply: whoever may approve may reject. A set that runs is stopped with
config push-cancel instead; a draft is withdrawn with it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decideOn(cmd, cfg, args[0], changeSetID, func(ctx context.Context, rc *restoreCLI, id int64) error {
				c, err := rc.svc.RejectChangeSet(ctx, cliRestoreActor(), id, note)
				if err != nil {
					return changeSetRefusal(id, "rejected", err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "change set %d %q rejected: it never runs; its %d device(s) are skipped\n", c.ID, c.Name, c.Targets)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&note, "note", "", "a note kept with the decision (why)")
	return cmd
}

func newConfigPushCancel(cfg *config.Config) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "push-cancel ID [--reason TEXT]",
		Short: "Withdraw a change set, or stop one that runs (devices not started are skipped)",
		Long: `Withdraw change set ID, a draft, ready, approved or running: its devices
not started are skipped and never pushed. A device being pushed is not
stopped: its push ends on its own. Written to the audit log.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decideOn(cmd, cfg, args[0], changeSetID, func(ctx context.Context, rc *restoreCLI, id int64) error {
				c, err := rc.svc.CancelChangeSet(ctx, cliRestoreActor(), id, reason)
				if err != nil {
					return changeSetRefusal(id, "cancelled", err)
				}
				counts, err := rc.store.ChangeSetCounts(ctx, id)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				fmt.Fprintf(out, "change set %d %q cancelled: %d device(s) skipped\n", c.ID, c.Name, counts[db.TargetSkipped])
				if n := counts[db.TargetRunning] + counts[db.TargetQueued]; n > 0 {
					fmt.Fprintf(out, "%d device(s) being pushed end on their own; config push-status %d shows how.\n", n, c.ID)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, kept with the change set")
	return cmd
}

// readPushFile reads the lines of a change set from a file, or standard
// input for "-", bounded in size.
func readPushFile(cmd *cobra.Command, name string) (string, error) {
	var r io.Reader
	if name == "-" {
		r = cmd.InOrStdin()
	} else {
		if name == "" {
			return "", errors.New("--file: name a file (- for standard input)")
		}
		f, err := os.Open(name)
		if err != nil {
			return "", fmt.Errorf("--file: cannot read %s: %w", name, errors.Unwrap(err))
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, db.ChangeSetBodyMax+1))
	if err != nil {
		return "", fmt.Errorf("--file: cannot read %s: %w", name, err)
	}
	if len(data) > db.ChangeSetBodyMax {
		return "", fmt.Errorf("--file: %s is larger than %d KiB", name, db.ChangeSetBodyMax>>10)
	}
	text := string(data)
	if err := checkPushText("--file: "+name, text); err != nil {
		return "", err
	}
	return text, nil
}

// checkPushText refuses lines that are empty, too long or not UTF-8;
// what names where they came from.
func checkPushText(what, text string) error {
	switch {
	case strings.TrimSpace(text) == "":
		return fmt.Errorf("%s holds no lines to push", what)
	case len(text) > db.ChangeSetBodyMax:
		return fmt.Errorf("%s is larger than %d KiB", what, db.ChangeSetBodyMax>>10)
	case !utf8.ValidString(text):
		return fmt.Errorf("%s is not UTF-8 text", what)
	}
	return nil
}

// pushVars reads the --var flags.
func pushVars(vars []string, tmpl bool) (map[string]string, error) {
	if len(vars) > 0 && !tmpl {
		return nil, errors.New("--var is for templates: add --template, and use {{.Vars.KEY}} in the lines")
	}
	out := make(map[string]string, len(vars))
	for _, v := range vars {
		k, val, ok := strings.Cut(v, "=")
		switch {
		case !ok:
			return nil, fmt.Errorf("--var %q: want KEY=VALUE", v)
		case !pushVarKey.MatchString(k):
			return nil, fmt.Errorf("--var %q: KEY is letters, digits and _, not starting with a digit (as {{.Vars.KEY}} reads it)", v)
		case !utf8.ValidString(val) || strings.ContainsFunc(val, func(r rune) bool { return r < ' ' && r != '\t' }):
			return nil, fmt.Errorf("--var %s: the value holds a control character or is not UTF-8", k)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("--var %s is given twice", k)
		}
		out[k] = val
	}
	return out, nil
}

// pushDevices resolves --device (in order) or --group into device IDs.
func pushDevices(ctx context.Context, store *db.Store, devices []string, group string, byName bool) ([]int64, error) {
	if group != "" {
		g, err := resolveGroup(ctx, store, group)
		if err != nil {
			return nil, fmt.Errorf("--group: %w", err)
		}
		ids, err := store.TargetDevices(ctx, db.ScheduleTargetGroups, []int64{g.ID})
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("--group: group %s (ID %d) and its subgroups hold no enabled device", g.Name, g.ID)
		}
		if len(ids) > db.ChangeSetTargetsMax {
			return nil, fmt.Errorf("--group: group %s holds %d enabled devices; a change set takes at most %d", g.Name, len(ids), db.ChangeSetTargetsMax)
		}
		return ids, nil
	}
	if len(devices) > db.ChangeSetTargetsMax {
		return nil, fmt.Errorf("--device: at most %d devices", db.ChangeSetTargetsMax)
	}
	ids := make([]int64, 0, len(devices))
	seen := map[int64]string{}
	for _, arg := range devices {
		d, err := resolveDevice(ctx, store, arg, byName)
		if err != nil {
			return nil, fmt.Errorf("--device: %w", err)
		}
		if first, dup := seen[d.ID]; dup {
			return nil, fmt.Errorf("--device: device %s (ID %d) is named twice (%q and %q)", d.Name, d.ID, first, arg)
		}
		if !d.Enabled {
			return nil, fmt.Errorf("--device: device %s (ID %d) is disabled; enable it, or leave it out", d.Name, d.ID)
		}
		seen[d.ID] = arg
		ids = append(ids, d.ID)
	}
	return ids, nil
}

// changeSetID reads a change set ID argument.
func changeSetID(arg string) (int64, error) {
	id, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || id < 1 {
		return 0, fmt.Errorf("change set ID %q: want a positive number (config pushes lists them)", arg)
	}
	return id, nil
}

// pushFieldError names the argument or flag a refused field of a new
// change set came from.
func pushFieldError(err error, fromFile bool) error {
	var field *db.ErrInvalidField
	if !errors.As(err, &field) {
		return err
	}
	body := "--body"
	if fromFile {
		body = "--file"
	}
	flag := map[string]string{"name": "NAME", "body": body, "concurrency": "--concurrency", "stop_after_failures": "--stop-after",
		"targets": "--device", "variables": "--var"}[field.Field]
	if flag == "" {
		flag = field.Field
	}
	return fmt.Errorf("%s: %s", flag, field.Message)
}

// changeSetRefusal turns the store's or the service's refusal of a
// decision on change set id into a sentence; action is what was refused
// ("approved", "rejected", "cancelled").
func changeSetRefusal(id int64, action string, err error) error {
	var state *db.ErrChangeSetState
	var field *db.ErrInvalidField
	switch {
	case errors.Is(err, db.ErrNotFound):
		return fmt.Errorf("no change set with the ID %d (config pushes lists them)", id)
	case errors.Is(err, restore.ErrFourEyes):
		return fmt.Errorf("change set %d: four eyes are on, so someone other than the person who made it must approve it, signed in: "+
			"approvals then come from a person in the web interface (Change sets), not from the command line", id)
	case errors.Is(err, db.ErrChangeSetExpired):
		return fmt.Errorf("change set %d expired: it was not approved, or could not start, in time; push it again", id)
	case errors.As(err, &state):
		why := "it ended"
		switch {
		case action == "rejected" && state.Have == db.ChangeSetDraft:
			why = "only a set waiting for approval is rejected; config push-cancel withdraws a draft"
		case action == "rejected" && state.Have == db.ChangeSetRunning:
			why = "it was approved and runs; config push-cancel stops it"
		case state.Have == db.ChangeSetDraft:
			why = "its dry run found a device that cannot be pushed (config push-status " + strconv.FormatInt(id, 10) + " says which); push again without it"
		case state.Have == db.ChangeSetApproved || state.Have == db.ChangeSetRunning:
			why = "it was approved already; config push-cancel stops it"
		}
		return fmt.Errorf("change set %d is %s and cannot be %s: %s", id, state.Have, action, why)
	case errors.As(err, &field):
		flag := map[string]string{"note": "--note", "reason": "--reason"}[field.Field]
		if flag == "" {
			flag = field.Field
		}
		return fmt.Errorf("%s: %s", flag, field.Message)
	}
	return err
}

// maskRendered is what the dry run rendered for t, its secrets masked
// with the device's masker (as config show masks them); "" when nothing
// rendered.
func maskRendered(ctx context.Context, store *db.Store, keys *redact.Keyring, t db.ChangeSetTarget) (string, error) {
	if t.Rendered == nil {
		return "", nil
	}
	if keys == nil {
		return *t.Rendered, nil
	}
	d, err := store.GetDevice(ctx, t.DeviceID)
	if err != nil {
		return "", err
	}
	return keys.Device(d.ID, d.Platform).Text(*t.Rendered), nil
}
