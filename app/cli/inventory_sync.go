package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"backupd/app/config"
	"backupd/app/insync"
	"backupd/app/netguard"
	"backupd/db"
)

// syncLine is a report line as sync --json prints it.
type syncLine struct {
	Action   string   `json:"action"`
	Name     string   `json:"name"`
	Key      string   `json:"key,omitempty"`
	DeviceID int64    `json:"device_id,omitempty"`
	Fields   []string `json:"fields,omitempty"`
	Reason   string   `json:"reason,omitempty"`
}

// syncReport is one source's report as sync --json prints it.
type syncReport struct {
	Source string         `json:"source"`
	DryRun bool           `json:"dry_run"`
	Error  string         `json:"error,omitempty"`
	Lines  []syncLine     `json:"lines"`
	Counts map[string]int `json:"counts"`
}

func newInventorySync(cfg *config.Config) *cobra.Command {
	var names []string
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "sync [--source NAME]... [--dry-run] [--json]",
		Short: "Sync inventory sources now, in this process, and print what each did to each device",
		Long: `Fetch the named sources (every enabled one when none is named) and bring the
device list in step with them, one transaction per source, each change
audited with the source's name. backupd serve need not run: the command
works on the store as every other command does. A disabled source runs
only with --dry-run.

The report has one line per device: create, update (the fields), claim,
disable (it vanished from the source: never deleted), enable (it came
back), leave (with the reason) or skip (the record cannot become a device:
the problem, and what to add). Then the figures.

--dry-run fetches and plans but writes nothing: its report is what a real
run would do, unless the devices change in between.

Exit status: 0 when every source synced, 1 when any failed (its error is
in its report; nothing was changed for it), 2 for a usage error.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{annotationErrorExit: "2"},
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			defer store.Close()
			var run []db.InventorySource
			if len(names) == 0 {
				all, err := store.InventorySources(ctx)
				if err != nil {
					return &exitError{code: 1, err: err}
				}
				for _, s := range all {
					if s.Enabled {
						run = append(run, s)
					}
				}
				if len(run) == 0 {
					fmt.Fprintln(cmd.ErrOrStderr(), "no enabled inventory source: add one with backupd inventory source add")
					return nil
				}
			}
			seen := map[int64]bool{}
			for _, n := range names {
				src, err := sourceByName(ctx, store, n)
				if err != nil {
					return err
				}
				if !src.Enabled && !dryRun {
					return fmt.Errorf("inventory source %q is disabled: enable it with backupd inventory source edit %q --enable, or look with --dry-run", src.Name, src.Name)
				}
				if !seen[src.ID] {
					seen[src.ID] = true
					run = append(run, src)
				}
			}
			outbound, err := netguard.Load(ctx, store)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			syncer := insync.Syncer{Store: store, Sealer: sealer,
				Options: insync.Options{Outbound: outbound, UserAgent: "backupd/" + Version}}
			by := db.AuditEntry{Username: cliActor(), Interface: "cli"}
			var reports []syncReport
			var failed []string
			for _, src := range run {
				rep, err := syncer.Sync(ctx, src.ID, dryRun, by)
				if err != nil {
					failed = append(failed, src.Name)
					if rep.Error == "" {
						rep.Error = err.Error()
					}
				}
				rep.Source = src.Name
				reports = append(reports, reportOf(rep))
				if !asJSON {
					printReport(cmd.OutOrStdout(), rep)
				}
			}
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), reports); err != nil {
					return &exitError{code: 1, err: err}
				}
			}
			if len(failed) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d of %d inventory sources failed and changed nothing: %q", len(failed), len(run), failed)}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&names, "source", nil, "the source to sync, by name (again for more); default: every enabled source")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "fetch and plan, write nothing: what a sync would do")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reports as JSON")
	return cmd
}

func reportOf(rep insync.Report) syncReport {
	r := syncReport{Source: rep.Source, DryRun: rep.DryRun, Error: rep.Error, Lines: []syncLine{}, Counts: rep.Counts()}
	for _, l := range rep.Lines {
		r.Lines = append(r.Lines, syncLine{Action: string(l.Action), Name: l.Name, Key: l.Key, DeviceID: l.DeviceID, Fields: l.Fields, Reason: l.Reason.String()})
	}
	return r
}

// printReport prints one source's report for a person: a heading, a line
// per device, the figures; or the error that changed nothing.
func printReport(w io.Writer, r insync.Report) {
	head := "inventory source " + r.Source
	if r.DryRun {
		head += " (dry run: nothing written)"
	}
	fmt.Fprintln(w, head)
	if r.Error != "" {
		fmt.Fprintf(w, "  failed, nothing changed: %s\n\n", r.Error)
		return
	}
	for _, l := range r.Lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
	fmt.Fprintf(w, "  %s\n\n", showCounts(r.Counts()))
}
