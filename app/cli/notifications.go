package cli

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"backupd/app/config"
	"backupd/app/metrics"
	"backupd/app/notify"
	"backupd/app/redact"
	"backupd/app/secret"
	"backupd/db"
)

// runNotifications runs the delivery worker (the outbox to the channels),
// the stale check and the daily pruning of the delivery log until bg
// ends, and returns once they stopped. They run on the leading node only,
// on their own goroutines, and only read what backups wrote: a channel
// that is down never slows a backup.
func runNotifications(bg context.Context, cfg config.Config, store *db.Store, sealer *secret.Sealer, log *slog.Logger) {
	var wg sync.WaitGroup
	defer wg.Wait()
	goBG := func(fn func()) {
		wg.Add(1)
		go func() { defer wg.Done(); fn() }()
	}
	wlog := log.With("component", "notify")
	// Webhook URLs stored in clear by an earlier version are sealed once,
	// here, since sealing needs the key that SQL migrations do not have.
	switch sealed, skipped, err := notify.SealWebhookURLs(bg, store, notify.Sealer(sealer), notify.Opener(sealer)); {
	case err != nil && bg.Err() == nil:
		wlog.Error("sealing webhook URLs stored in clear", "err", err)
	case sealed > 0 || skipped > 0:
		wlog.Info("sealed webhook URLs stored in clear", "channels", sealed, "left_unreadable", skipped)
	}
	window := cfg.NotifyWindow
	if cfg.Demo && window == 0 {
		window = demoNotifyWindow
	}
	w := notify.NewWorker(store, notify.Opener(sealer), notify.WorkerOptions{
		Window:    window,
		PublicURL: cfg.PublicURL,
		UserAgent: "backupd/" + Version,
		// The data directory's, also on PostgreSQL (whose store has no
		// file): each node keeps its own run files.
		LockDir: filepath.Join(cfg.DataDir, "run"),
		Logger:  wlog,
		Sent:    metrics.NotificationsSent,
		Secrets: redact.NewKeyring(sealer),
	})
	goBG(func() { keepRunning(bg, wlog, "notification delivery", w.Run) })
	goBG(func() { notify.RunStaleCheck(bg, store, cfg.StaleAfter, 0, wlog) })
	goBG(func() {
		runDaily(bg, store, func(ctx context.Context) error {
			n, err := store.PruneNotifications(ctx, time.Now().Add(-notificationHistory))
			if err != nil && ctx.Err() == nil {
				wlog.Error("pruning the delivery log", "err", err)
			} else if n > 0 {
				wlog.Info("pruned the delivery log", "deliveries", n, "older_than", notificationHistory.String())
			}
			return err
		})
	})
}

// notificationHistory is how long sent and given-up deliveries stay in
// the delivery log; pending and failing ones stay whatever their age.
const notificationHistory = 30 * 24 * time.Hour

// demoNotifyWindow is the demo's digest window: short, so that a newcomer
// sees the delivery soon after the change.
const demoNotifyWindow = 15 * time.Second
