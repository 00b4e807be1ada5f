package gitmirror

import (
	"context"
	"errors"
	"time"
)

// LoopOptions tune Run.
type LoopOptions struct {
	// Poll is how often the queue is looked at (default 15 s).
	Poll time.Duration
	// MaxWait bounds how long a busy queue delays a commit (default 10
	// min).
	MaxWait time.Duration
}

// Run keeps the mirror up to date while the server runs: once the backup
// queue has drained (a run is over) it commits what changed, and at most
// MaxWait apart while the queue stays busy; then it pushes. It never
// holds up backups: it only reads the database, and a failing git or
// remote is logged, reported and tried again later (pushes with a growing
// pause, up to 10 minutes).
func (m *Mirror) Run(ctx context.Context, o LoopOptions) {
	if o.Poll <= 0 {
		o.Poll = 15 * time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 10 * time.Minute
	}
	t := time.NewTicker(o.Poll)
	defer t.Stop()
	lastSync, lastFP := time.Time{}, ""
	pushPending := true // a push a previous process left undone
	var pushAfter time.Time
	pushPause := time.Minute
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cfg, err := m.store.GitMirrorSettings(ctx)
		if err != nil || !cfg.Enabled {
			continue
		}
		queued, running, err := m.store.JobCounts(ctx)
		if err != nil {
			continue
		}
		// Reading every device's version is the costly part (0.5 s for
		// 10,000 devices with 100 backups each): done once the queue is
		// idle and something changed, or every MaxWait regardless.
		fp := ""
		if queued+running == 0 {
			if fp, err = m.store.MirrorFingerprint(ctx); err != nil {
				continue
			}
			if cfg.Groups {
				fp += "|groups"
			}
		}
		if (fp != "" && fp != lastFP) || time.Since(lastSync) >= o.MaxWait {
			// A failure is tried again after the next change or MaxWait,
			// not at every poll.
			lastSync, lastFP = time.Now(), fp
			res, err := m.Sync(ctx)
			var foreign *ForeignCommitError
			switch {
			case errors.As(err, &foreign):
				// The push refuses it too, and records why: the UI, the
				// metric and git.push_failed say so.
				m.log.Error("git mirror: commit refused", "err", err)
				pushPending = true
			case err != nil:
				if ctx.Err() == nil {
					m.log.Error("git mirror: commit failed", "err", err)
				}
				continue
			case res.Commit != "":
				m.log.Info("git mirror: committed", "commit", res.Commit, "files", len(res.Changes), "moved", len(res.Moved))
				pushPending, pushAfter = true, time.Time{}
			}
		}
		if !pushPending || cfg.RemoteURL == "" || time.Now().Before(pushAfter) {
			continue
		}
		if err := m.Push(ctx); err != nil {
			pushAfter = time.Now().Add(pushPause)
			pushPause = min(pushPause*2, 10*time.Minute)
			continue
		}
		pushPending, pushPause = false, time.Minute
	}
}
