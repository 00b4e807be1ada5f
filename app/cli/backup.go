package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"backupd/app/backup"
	"backupd/app/config"
	"backupd/db"
	"backupd/db/queue"
)

func newBackup(cfg *config.Config) *cobra.Command {
	cmd := &cobra.Command{Use: "backup", Short: "Run backups from the command line"}
	cmd.AddCommand(newBackupRun(cfg), newBackupPrune(cfg))
	return cmd
}

func newBackupPrune(cfg *config.Config) *cobra.Command {
	var keepLast, keepDays int
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Apply the retention policy now (the server also does it daily)",
		Long: `Apply the retention policy now: per device, versions beyond the newest
--keep-last and older than --keep-days are deleted, never a device's latest
good version, and snapshots no version uses any more are purged. Given
--keep-last or --keep-days, the policy is first saved with those values (0
means no limit of that kind).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keepLast < 0 || keepDays < 0 {
				return errors.New("--keep-last and --keep-days must be 0 (no limit) or more")
			}
			ctx := cmd.Context()
			store, _, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()
			f := cmd.Flags()
			if f.Changed("keep-last") || f.Changed("keep-days") {
				policy, err := store.RetentionPolicy(ctx)
				if err != nil {
					return err
				}
				if f.Changed("keep-last") {
					policy.KeepLast = keepLast
				}
				if f.Changed("keep-days") {
					policy.KeepDays = keepDays
				}
				if err := store.PutSetting(ctx, db.SettingRetention, policy); err != nil {
					return err
				}
				audit(ctx, store, cmd.ErrOrStderr(), "settings.update", "settings", db.SettingRetention,
					map[string]any{"keep_last": policy.KeepLast, "keep_days": policy.KeepDays})
			}
			res, err := backup.RunRetention(ctx, store, cfg.Logger(io.Discard))
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted %d backup record(s), purged %d snapshot(s)\n", res.BackupsDeleted, res.SnapshotsPurged)
			return nil
		},
	}
	cmd.Flags().IntVar(&keepLast, "keep-last", 0, "keep at least the newest N versions per device (saved as the policy)")
	cmd.Flags().IntVar(&keepDays, "keep-days", 0, "keep versions younger than D days (saved as the policy)")
	return cmd
}

func newBackupRun(cfg *config.Config) *cobra.Command {
	var devices, groups []int64
	var all bool
	cmd := &cobra.Command{
		Use:   "run (--device ID | --group ID | --all)",
		Short: "Back devices up now, in this process, and print one line per device",
		Long: `Back devices up now, in this process, against the data directory (a server
may be using it at the same time; a device is never backed up twice at once).
--device backs up the devices named, even disabled ones; --group and --all
take the enabled devices of the groups (with their subgroups) or of all.
Prints one line per device and exits non-zero if any backup failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			picked := 0
			for _, set := range []bool{len(devices) > 0, len(groups) > 0, all} {
				if set {
					picked++
				}
			}
			if picked != 1 {
				return errors.New("say which devices: exactly one of --device ID, --group ID or --all")
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			store, sealer, err := openData(ctx, cfg, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer store.Close()

			var ids []int64
			switch {
			case len(devices) > 0:
				for _, id := range devices {
					if _, err := store.GetDevice(ctx, id); errors.Is(err, db.ErrNotFound) {
						return fmt.Errorf("no device with ID %d", id)
					} else if err != nil {
						return err
					}
				}
				ids = devices
			case len(groups) > 0:
				for _, id := range groups {
					if _, err := store.GetGroup(ctx, id); errors.Is(err, db.ErrNotFound) {
						return fmt.Errorf("no group with ID %d", id)
					} else if err != nil {
						return err
					}
				}
				if ids, err = store.TargetDevices(ctx, "groups", groups); err != nil {
					return err
				}
			default:
				if ids, err = store.TargetDevices(ctx, "all", nil); err != nil {
					return err
				}
			}
			if len(ids) == 0 {
				fmt.Fprintln(cmd.ErrOrStderr(), "no enabled devices to back up")
				return nil
			}
			// The engine's own log stays quiet unless asked: the per-device
			// lines below say the same.
			logCfg := *cfg
			if !cmd.Flags().Changed("log-level") {
				logCfg.LogLevel = "error"
			}
			engine := backup.New(store, sealer, logCfg.Logger(cmd.ErrOrStderr()), backup.Options{Workers: cfg.Workers, RetryBackoff: 5 * time.Second})
			runErr := runBackups(ctx, store, engine, ids, cmd.OutOrStdout(), cmd.ErrOrStderr())
			// The run is one commit of the git mirror, if it is on.
			mirrorAfterRun(ctx, store, sealer, logCfg.Logger(cmd.ErrOrStderr()), cfg.DataDir, cmd.ErrOrStderr())
			return runErr
		},
	}
	f := cmd.Flags()
	f.Int64SliceVar(&devices, "device", nil, "device ID (repeatable, or comma-separated)")
	f.Int64SliceVar(&groups, "group", nil, "group ID, subgroups included (repeatable)")
	f.BoolVar(&all, "all", false, "every enabled device")
	f.IntVar(&cfg.Workers, "workers", cfg.Workers, "devices backed up at once")
	return cmd
}

// runBackups queues the devices, works their jobs and prints each result.
func runBackups(ctx context.Context, store *db.Store, engine *backup.Engine, ids []int64, stdout, stderr io.Writer) error {
	names := map[int64]string{}
	remote := 0
	for _, id := range ids {
		if d, err := store.GetDevice(ctx, id); err == nil {
			names[id] = d.Name
			if d.ZoneID != db.LocalZone {
				remote++
			}
		}
	}
	if remote > 0 {
		fmt.Fprintf(stderr, "%d of the devices are in zones their remote collectors back up: this waits for the collectors (see `backupd collector list`)\n", remote)
	}
	// Backups a crashed run left in flight are ended first, so that this
	// run queues or adopts them as ready jobs with their attempts intact
	// instead of waiting on, or reporting, what the dead run left.
	if _, err := engine.Recover(ctx); err != nil {
		return err
	}
	jobs, err := engine.Enqueue(ctx, ids, queue.TriggerCLI)
	if err != nil {
		return err
	}
	var ok, failed, changed int
	err = engine.RunJobs(ctx, jobs, func(j queue.Job) {
		took := "-"
		if j.StartedAt != nil && j.FinishedAt != nil {
			took = j.FinishedAt.Sub(*j.StartedAt).Round(100 * time.Millisecond).String()
		}
		switch j.State {
		case queue.JobSucceeded:
			ok++
			what := "unchanged"
			if b, err := store.GetBackup(ctx, deref(j.BackupID)); err == nil {
				switch {
				case b.First:
					what = "first backup"
				case b.Changed:
					what = "changed"
					changed++
				}
				if b.Bytes != nil {
					what += fmt.Sprintf(", %d bytes", *b.Bytes)
				}
			}
			fmt.Fprintf(stdout, "ok      %6d  %-24s %7s  %s\n", j.DeviceID, names[j.DeviceID], took, what)
		default:
			failed++
			msg := j.State
			if j.Error != nil {
				msg = *j.Error
			}
			fmt.Fprintf(stdout, "FAILED  %6d  %-24s %7s  %s\n", j.DeviceID, names[j.DeviceID], took, msg)
		}
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%d device(s): %d backed up (%d changed), %d failed\n", ok+failed, ok, changed, failed)
	if failed > 0 {
		return fmt.Errorf("%d of %d backups failed", failed, ok+failed)
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
