package backup

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"backupd/app/collect"
	"backupd/db/queue"
)

// A WorkRunner runs a job of another kind than a backup (a restore, a
// push) that the engine claimed for it. It takes the device's backups
// through the engine (Attempt), records them in the job (the claim's own
// backups row first, then extra ones) and ends the job itself, in the
// same transaction as its own record (db.Store.FinishRestore). A job it
// leaves running when ctx ends (a shutdown) is interrupted by the
// engine: its state on the device is unknown, and it never runs again.
type WorkRunner interface {
	RunWork(ctx context.Context, c queue.Claim)
}

// A WorkInterruptObserver is a WorkRunner told of its jobs the engine
// ended without it, as interrupted: at a shutdown, when it found them
// left by a process that died, or after the runner panicked. The
// runner counts them (a restore's metrics); they never run again.
type WorkInterruptObserver interface {
	WorkInterrupted(ends []queue.WorkEnd)
}

// workInterrupted tells each runner that observes interruptions of its
// jobs an interruption ended.
func (e *Engine) workInterrupted(res queue.Interrupted) {
	for kind, r := range e.opts.Work {
		o, ok := r.(WorkInterruptObserver)
		if !ok {
			continue
		}
		var ends []queue.WorkEnd
		for _, w := range res.Work {
			if w.Kind == kind {
				ends = append(ends, w)
			}
		}
		if len(ends) > 0 {
			o.WorkInterrupted(ends)
		}
	}
}

// claim takes the ready jobs the engine runs: backups, and the kinds of
// its work runners. A run among given job IDs (backup run) takes
// backups only.
func (e *Engine) claim(ctx context.Context, owner string, n int, only []int64) ([]queue.Claim, error) {
	if len(e.opts.Work) == 0 || len(only) > 0 {
		return e.store.ClaimJobs(ctx, owner, n, only)
	}
	kinds := []string{queue.KindBackup}
	for k := range e.opts.Work {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return e.store.ClaimJobsOfKinds(ctx, owner, n, nil, kinds)
}

// runWork hands a claimed job to its kind's runner. A runner that
// panics, or a job of a kind nobody runs here, leaves the device in a
// state nobody knows: the job is interrupted, which for these kinds
// means failed, "state unknown", never run again.
func (e *Engine) runWork(parent, ctx context.Context, c queue.Claim) {
	r, ok := e.opts.Work[c.Kind]
	if !ok {
		e.log.Error("a job of a kind this engine does not run was claimed", "kind", c.Kind, "job_id", c.ID)
		e.interruptWork(parent, c)
		return
	}
	panicked := func() (p bool) {
		defer func() {
			if v := recover(); v != nil {
				e.log.Error(c.Kind+" panicked", "device_id", c.DeviceID, "job_id", c.ID,
					"panic_type", fmt.Sprintf("%T", v), "stack", string(debug.Stack()))
				p = true
			}
		}()
		r.RunWork(ctx, c)
		return false
	}()
	if panicked {
		e.interruptWork(parent, c)
	}
}

// interruptWork ends a work job whose runner could not end it.
func (e *Engine) interruptWork(parent context.Context, c queue.Claim) {
	dctx, release := detach(parent)
	defer release()
	ctx, cancel := context.WithTimeout(dctx, 30*time.Second)
	defer cancel()
	res, err := e.store.InterruptJob(ctx, c, e.opts.MaxInterruptions)
	if err != nil {
		e.log.Error("ending a "+c.Kind+" job failed", "device_id", c.DeviceID, "job_id", c.ID, "err", err)
		return
	}
	e.logWork(res)
}

// Attempt backs up the device of a claimed job now and returns the
// outcome, not recorded: a work runner records it as its job's own
// attempt (queue.RecordAttempt) or as an extra one
// (queue.RecordExtraAttempt). It never asks for a retry.
func (e *Engine) Attempt(ctx context.Context, c queue.Claim) queue.Outcome {
	o := e.attempt(ctx, c)
	o.RetryAt = nil
	o.FinishedAt = time.Now()
	return o
}

// Target is what the engine logs in to a device with (credentials
// opened, host key pinned), for a work runner's own session.
func (e *Engine) Target(ctx context.Context, deviceID int64) (collect.Target, error) {
	return e.target(ctx, deviceID)
}
