package cli

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"backupd/app/backup"
	"backupd/app/config"
	"backupd/app/demo"
	"backupd/app/gitmirror"
	"backupd/app/identity"
	"backupd/app/insync"
	"backupd/app/netguard"
	"backupd/app/restore"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
)

// startCollection starts everything of `serve` that backs devices up on
// every node: the job engine and, with --demo, the simulated fleet (its
// webhook receiver and inventory source beside it), and
// with --syslog-listen (or --demo) the syslog listener. Each runs on goBG
// until bg ends; stop, called once they all returned, stops the fleet. The
// engine is what the web interface enqueues and cancels jobs with;
// syslogTrigger is nil when no listener runs. lead runs the leader's part
// (leaderCollection) until its context ends.
func startCollection(ctx, bg context.Context, cfg config.Config, store *db.Store, sealer *secret.Sealer,
	log *slog.Logger, goBG func(func())) (engine *backup.Engine, syslogTrigger *backup.SyslogTrigger, lead func(context.Context), stop func(), err error) {
	stop = func() {}
	if err := backup.EnsureDefaultSchedule(ctx, store, cfg.ZoneName()); err != nil {
		return nil, nil, nil, stop, err
	}
	// Restores run as jobs of their own kind on the engine's workers, so
	// that a backup and a restore never touch a device at once.
	runner := restore.NewRunner(store, sealer, log.With("component", "restore"))
	engine = backup.New(store, sealer, log.With("component", "backup"), backup.Options{Workers: cfg.Workers,
		Work: map[string]backup.WorkRunner{queue.KindRestore: runner, queue.KindPush: restore.PushRunner{Runner: runner}}})
	runner.Engine = engine
	goBG(func() {
		if err := engine.Run(bg); err != nil {
			log.Error("backup engine stopped", "err", err)
		}
	})
	if err := applyGitFlags(ctx, store, sealer, cfg.Git, io.Discard); err != nil {
		return engine, nil, nil, stop, err
	}
	lead = func(ctx context.Context) { leaderCollection(ctx, cfg, store, sealer, engine, log) }

	syslogAddr, debounce := cfg.SyslogListen, cfg.SyslogDebounce
	if cfg.Demo {
		if syslogAddr == "" {
			syslogAddr = "127.0.0.1:0"
		}
		if debounce == 0 {
			debounce = demoSyslogDebounce
		}
	}
	if syslogAddr != "" {
		syslogTrigger, err = backup.StartSyslog(ctx, store, engine, backup.SyslogOptions{
			Addr: syslogAddr, Debounce: debounce, Logger: log.With("component", "syslog"),
		})
		if err != nil {
			return engine, nil, nil, stop, err
		}
		goBG(func() {
			<-bg.Done()
			_ = syslogTrigger.Close()
		})
		log.Info("syslog listening", "addr", syslogTrigger.Addr(), "transports", "udp,tcp")
	}

	if cfg.Demo {
		fleet, err := demo.Start(ctx, store, sealer, log.With("component", "demo"))
		if err != nil {
			return engine, syslogTrigger, lead, stop, err
		}
		// The devices outlive the engine, so that backups in flight at
		// shutdown are not failed by devices vanishing under them.
		stop = func() { fleet.Close() }
		// Before the first backups, so that their events have a rule.
		hook, err := demo.StartNotifications(ctx, store, sealer, log.With("component", "demo"))
		if err != nil {
			return engine, syslogTrigger, lead, stop, err
		}
		stop = func() { fleet.Close(); hook.Close() }
		// An inventory source of devices the lab lacks, synced on
		// demand from Settings → Inventory sources.
		inv, err := demo.StartInventory(ctx, store, sealer, log.With("component", "demo"))
		if err != nil {
			return engine, syslogTrigger, lead, stop, err
		}
		stop = func() { fleet.Close(); hook.Close(); inv.Close() }
		if _, err := engine.Enqueue(ctx, append(fleet.DeviceIDs(), inv.DeviceIDs()...), queue.TriggerManual); err != nil {
			return engine, syslogTrigger, lead, stop, err
		}
		if syslogTrigger != nil {
			fleet.LogTo(syslogTrigger.Addr())
		}
		every := cfg.DemoChangesEvery
		if every <= 0 {
			every = demoChangesEvery
		}
		goBG(func() { fleet.Mutate(bg, max(every, time.Second), 3) })
	}
	return engine, syslogTrigger, lead, stop, nil
}

// demoChangesEvery is how often the demo fleet changes, by default.
const demoChangesEvery = 3 * time.Minute

// leaderCollection runs the fleet-wide part of collection, which one node
// of a cluster runs (the leader; on SQLite the one process), until ctx
// ends, and returns once each loop has stopped: the schedules (each tick
// queued in the transaction that moves the schedule on), reachability
// checks, daily retention and repack, the git mirror, notifications and
// the directory sync.
func leaderCollection(ctx context.Context, cfg config.Config, store *db.Store, sealer *secret.Sealer, engine *backup.Engine, log *slog.Logger) {
	var wg sync.WaitGroup
	goLead := func(fn func()) {
		wg.Add(1)
		go func() { defer wg.Done(); fn() }()
	}
	defer wg.Wait()
	sched := backup.NewStoreScheduler(store, engine.Poke, log.With("component", "scheduler"))
	goLead(func() {
		if err := sched.Run(ctx); err != nil && ctx.Err() == nil {
			log.Error("scheduler stopped", "err", err)
		}
	})
	reach := backup.NewReachability(store, log.With("component", "reachability"), backup.ReachOptions{})
	goLead(func() { reach.Run(ctx) })
	goLead(func() {
		runDaily(ctx, store, func(ctx context.Context) error {
			if _, err := backup.RunRetention(ctx, store, log.With("component", "retention")); err != nil {
				if ctx.Err() == nil {
					log.Warn("retention failed; it runs again once the database answers", "component", "retention", "err", err)
				}
				return err
			}
			_, err := backup.RunRepack(ctx, store, log.With("component", "repack"))
			// Both changed many rows: their counter deltas are folded now.
			foldCounters(ctx, store, log)
			return err
		})
	})
	if store.Postgres() {
		goLead(func() { runCounterFold(ctx, store, log) })
	}
	// Versions stored whole before deltas existed are packed once soon
	// after start (new ones are packed as they arrive).
	goLead(func() {
		t := time.NewTimer(repackDelay(cfg.Demo))
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			untilDone(ctx, store, func(ctx context.Context) error {
				_, err := backup.RunRepack(ctx, store, log.With("component", "repack"))
				return err
			})
		}
	})
	// The git mirror: one commit per run, then a push; it only reads the
	// database, so it never holds backups up.
	mirror := gitmirror.New(store, sealer, log.With("component", "git"), cfg.DataDir)
	goLead(func() { mirror.Run(ctx, gitmirror.LoopOptions{MaxWait: cfg.Git.MaxWait}) })
	// Notification delivery, the stale check and the delivery log's
	// pruning.
	goLead(func() { runNotifications(ctx, cfg, store, sealer, log) })
	// The directory sync: roles follow directory groups, and users the
	// directory no longer has lose their sessions and keys.
	syncer := identity.Syncer{Store: store, Sealer: sealer, Log: log.With("component", "directory")}
	goLead(func() { syncer.Run(ctx) })
	// Restores: previews attached, approved ones queued once their device
	// is free, requests whose time ran out ended.
	disp := restore.NewDispatcher(store, sealer, engine, log.With("component", "restore"))
	goLead(func() { disp.Run(ctx) })
	// Inventory sources: each enabled one with an interval synced when
	// due, failures recorded on the source (and told) by the sync.
	inventory := &insync.Scheduler{Store: store, Log: log.With("component", "inventory"),
		Sync: func(ctx context.Context, id int64) error { return scheduledSync(ctx, store, sealer, id) }}
	goLead(func() { inventory.Run(ctx, inventoryTick) })
}

// inventoryTick is how often the leader looks for inventory sources due a
// sync: their intervals are whole minutes.
const inventoryTick = time.Minute

// scheduledSync syncs inventory source id as the schedule does, through
// the outbound policy in force now, audited as backupd's own.
func scheduledSync(ctx context.Context, store *db.Store, sealer *secret.Sealer, id int64) error {
	outbound, err := netguard.Load(ctx, store)
	if err != nil {
		return err
	}
	s := insync.Syncer{Store: store, Sealer: sealer, Options: insync.Options{Outbound: outbound}}
	_, err = s.Sync(ctx, id, false, db.AuditEntry{Username: "backupd", Interface: "system", Action: "inventory.sync"})
	return err
}

// demoSyslogDebounce is the demo's quiet time after a logged change: short,
// so that a newcomer sees the syslog-triggered backup soon after the
// simulated change.
const demoSyslogDebounce = 15 * time.Second

// repackDelay is how long serve waits before packing what older versions
// left whole: long enough for the first scheduled backups to have the
// machine, short for the demo.
func repackDelay(demo bool) time.Duration {
	if demo {
		return 10 * time.Second
	}
	return 5 * time.Minute
}

// runDaily calls fn an hour after start and then once a day until ctx
// ends; a failed call is tried again (untilDone) before the day's wait.
func runDaily(ctx context.Context, store *db.Store, fn func(context.Context) error) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			untilDone(ctx, store, fn)
			t.Reset(24 * time.Hour)
		}
	}
}

// counterFoldEvery is how often the leader folds the counters' deltas into
// their totals on PostgreSQL: a busy cluster appends a few deltas per
// finished backup, and every read of the counters adds up what is left.
const counterFoldEvery = 15 * time.Second

// runCounterFold folds the counters' deltas every counterFoldEvery until
// ctx ends.
func runCounterFold(ctx context.Context, store *db.Store, log *slog.Logger) {
	t := time.NewTicker(counterFoldEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			foldCounters(ctx, store, log)
		}
	}
}

// foldCounters folds the counters' deltas once; a failure is logged, and
// the deltas wait for the next fold (the counters' values are right
// either way).
func foldCounters(ctx context.Context, store *db.Store, log *slog.Logger) {
	if _, err := store.FoldCounters(ctx); err != nil && ctx.Err() == nil {
		log.Warn("cannot fold the counters' deltas", "component", "counters", "err", err)
	}
}
