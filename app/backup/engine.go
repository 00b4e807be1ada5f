// Package backup runs backups: the persistent job queue's workers, the
// scheduler, change detection, diffs, search and retention.
package backup

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"backupd/app/cluster/lock"
	"backupd/app/collect"
	"backupd/app/inventory"
	"backupd/app/metrics"
	"backupd/app/netguard"
	"backupd/app/secret"
	"backupd/db"
	"backupd/db/queue"
	"backupd/db/snapstore"
)

// Options tune an Engine; zero values take the defaults.
type Options struct {
	// Workers is how many devices are backed up at once (default 50).
	Workers int
	// MaxAttempts bounds the attempts of one job, retries included
	// (default 3). Attempts cut short because the process running them
	// stopped do not count.
	MaxAttempts int
	// MaxInterruptions bounds how often the process running a job may
	// stop mid-attempt (crash, kill, power cut, shutdown) before the job
	// fails (default queue.DefaultMaxInterruptions).
	MaxInterruptions int
	// RetryBackoff is the wait before the first retry of a connection
	// failure; it doubles per attempt, up to 10 minutes (default 30 s).
	RetryBackoff time.Duration
	// Timeouts bound each stage of a backup.
	Timeouts collect.Timeouts
	// Poll is how often an idle engine looks for work queued by another
	// process (default 1 s).
	Poll time.Duration
	// ShutdownGrace is how long a shutdown waits for running backups to
	// finish before interrupting them (default 15 s).
	ShutdownGrace time.Duration
	// CancelPoll is how often a running engine looks for its jobs an
	// operator cancelled from another process (default 2 s).
	CancelPoll time.Duration
	// RecoverEvery is how often a running engine looks for the running
	// jobs of engines that died, whatever its workers do (default 3 s on
	// PostgreSQL, where another node's jobs move only so, 30 s on
	// SQLite).
	RecoverEvery time.Duration
	// RestartBackoff is the pause before Run tries again to start after a
	// run ended early or could not start; it doubles per failure, up to
	// 10 s (default 1 s).
	RestartBackoff time.Duration
	// Work runs the jobs of other kinds than backups (queue.KindRestore,
	// queue.KindPush): the engine claims the kinds given here beside its
	// backups, on the same workers, and hands each such job to its
	// runner. Nil claims backups only.
	Work map[string]WorkRunner
}

// DefaultMaxAttempts is how many attempts a job gets unless
// Options.MaxAttempts says otherwise.
const DefaultMaxAttempts = 3

func (o *Options) defaults() {
	if o.Workers <= 0 {
		o.Workers = 50
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.MaxInterruptions <= 0 {
		o.MaxInterruptions = queue.DefaultMaxInterruptions
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = 30 * time.Second
	}
	if o.CancelPoll <= 0 {
		o.CancelPoll = 2 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.ShutdownGrace <= 0 {
		o.ShutdownGrace = 15 * time.Second
	}
	if o.RestartBackoff <= 0 {
		o.RestartBackoff = time.Second
	}
}

// Engine takes jobs from the queue in the store and backs devices up.
// Several engines (a server and `backupd backup run`) may share a store:
// a job runs in exactly one of them, and a device never has two jobs.
type Engine struct {
	store  *db.Store
	sealer *secret.Sealer
	log    *slog.Logger
	opts   Options
	// name names this engine (the owner of the jobs it runs); its
	// liveness lock tells other processes whether those jobs are still in
	// hand. Run renames it after losing that lock while goroutines of the
	// run that ended may still read it: use owner().
	name atomic.Pointer[string]
	wake chan struct{}
	// collect is collect.Collect; tests replace it to misbehave.
	collect func(context.Context, collect.Target) (collect.Result, error)
	// finished, when set, hears of every job this engine finishes.
	finishedMu sync.Mutex
	finished   func(jobID int64)
	// compare remembers each device's latest version as compared.
	compare *compareCache
	// running maps the jobs in hand to what stops them early.
	runningMu sync.Mutex
	running   map[int64]context.CancelCauseFunc
	// state is what Run is doing (engine_run.go).
	state engineState
}

// errCancelled is the cause of a job an operator stopped.
var errCancelled = errors.New(queue.ErrorCancelled)

// Cancel stops a job: a queued one never runs; a running one (here or in
// another process sharing the store) is cut off within seconds and
// recorded as cancelled. It reports false for a job already finished.
func (e *Engine) Cancel(ctx context.Context, jobID int64) (bool, error) {
	ok, err := e.store.CancelJob(ctx, jobID)
	if err != nil || !ok {
		return ok, err
	}
	e.stopLocal(jobID)
	return true, nil
}

func (e *Engine) stopLocal(jobID int64) {
	e.runningMu.Lock()
	stop := e.running[jobID]
	e.runningMu.Unlock()
	if stop != nil {
		stop(errCancelled)
	}
}

// owner is the engine's current name on the jobs it runs.
func (e *Engine) owner() string { return *e.name.Load() }

// watchCancels stops, every couple of seconds, the jobs in hand that an
// operator cancelled from another process; owner is the name of the run
// that started it.
func (e *Engine) watchCancels(ctx context.Context, owner string) {
	t := time.NewTicker(e.opts.CancelPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids, err := e.store.CancelRequested(ctx, owner)
		if err != nil {
			continue
		}
		for _, id := range ids {
			e.stopLocal(id)
		}
	}
}

// New returns an engine; Run starts it.
func New(store *db.Store, sealer *secret.Sealer, log *slog.Logger, opts Options) *Engine {
	opts.defaults()
	e := &Engine{
		store:   store,
		sealer:  sealer,
		log:     log,
		opts:    opts,
		wake:    make(chan struct{}, 1),
		collect: collect.Collect,
		compare: newCompareCache(),
		running: map[int64]context.CancelCauseFunc{},
	}
	e.rename()
	return e
}

// rename gives the engine a fresh name.
func (e *Engine) rename() {
	name := uuid.NewString()
	e.name.Store(&name)
}

// MaxAttempts is how many attempts a job gets, retries included.
func (e *Engine) MaxAttempts() int { return e.opts.MaxAttempts }

// Enqueue queues a backup of each device now and returns the job of each
// (an already queued or running job is reused). This is the entry point
// of the web UI's "Back up now".
func (e *Engine) Enqueue(ctx context.Context, deviceIDs []int64, trigger string) ([]int64, error) {
	now := time.Now()
	reqs := make([]queue.JobRequest, len(deviceIDs))
	for i, id := range deviceIDs {
		reqs[i] = queue.JobRequest{DeviceID: id, Trigger: trigger, NotBefore: now}
	}
	return e.EnqueueRequests(ctx, reqs)
}

// EnqueueFound is Enqueue saying, per device, whether its job is new or
// one it already had (queued: it now runs at once; running).
func (e *Engine) EnqueueFound(ctx context.Context, deviceIDs []int64, trigger string) ([]queue.Enqueued, error) {
	now := time.Now()
	reqs := make([]queue.JobRequest, len(deviceIDs))
	for i, id := range deviceIDs {
		reqs[i] = queue.JobRequest{DeviceID: id, Trigger: trigger, NotBefore: now}
	}
	out, err := e.store.EnqueueJobsFound(ctx, reqs)
	if err == nil {
		e.poke()
	}
	return out, err
}

// EnqueueRequests queues jobs with their own start times (schedules spread
// them over a window).
func (e *Engine) EnqueueRequests(ctx context.Context, reqs []queue.JobRequest) ([]int64, error) {
	ids, err := e.store.EnqueueJobs(ctx, reqs)
	if err == nil {
		e.poke()
	}
	return ids, err
}

// Poke makes the engine look at the queue now (jobs were queued
// elsewhere than through it).
func (e *Engine) Poke() { e.poke() }

func (e *Engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// lockDir holds one lock file per running engine.
func (e *Engine) lockDir() string { return filepath.Join(filepath.Dir(e.store.Path()), "run") }

// Recover ends the attempts of engines that died (a crash, kill -9, a
// power cut): their backups fail as interrupted and their jobs are queued
// again, ready at once and with no attempt used up. Engines still alive
// are left alone.
func (e *Engine) Recover(ctx context.Context) (int, error) {
	owners, err := e.store.RunningOwners(ctx)
	if err != nil {
		return 0, err
	}
	total := 0
	self := e.owner()
	for _, owner := range owners {
		if owner == self {
			continue
		}
		var res queue.Interrupted
		if e.store.Postgres() {
			// Dead when its liveness lock can be taken, checked in the
			// transaction that queues its jobs again.
			var dead bool
			if res, dead, err = e.store.InterruptDeadOwner(ctx, owner, e.opts.MaxInterruptions); err != nil {
				return total, err
			}
			if !dead {
				continue
			}
		} else {
			release, dead := claimDeadOwner(e.lockDir(), owner)
			if !dead {
				continue
			}
			res, err = e.store.InterruptJobs(ctx, owner, e.opts.MaxInterruptions)
			release()
			if err != nil {
				return total, err
			}
		}
		if res.Attempts > len(res.Work) {
			// A restore's or push's open backup is counted too; those
			// jobs are said below, and never run again.
			e.log.Warn("recovered backups interrupted by a stopped process; backup jobs run again", "count", res.Attempts)
		}
		e.logWork(res)
		e.logGaveUp(res)
		total += res.Attempts
	}
	return total, nil
}

// errLivenessLost ends a run whose liveness lock went (PostgreSQL).
var errLivenessLost = errors.New("the engine's liveness lock was lost")

// holdLiveness shows other processes that this engine lives: a lock
// file in the data directory on SQLite; on PostgreSQL, an advisory lock
// on a connection of its own, whose loss closes lost.
func (e *Engine) holdLiveness(ctx context.Context, owner string) (release func(), lost <-chan struct{}, err error) {
	if !e.store.Postgres() {
		release, err = holdOwnerLock(e.lockDir(), owner)
		return release, nil, err
	}
	sess, err := lock.Open(ctx, e.store)
	if err != nil {
		return nil, nil, err
	}
	// The name is this engine's alone, but its lock can be held a moment
	// by others: the session of this engine's previous run until the
	// server has seen that connection close, and another node checking
	// (for one transaction) whether this engine's jobs are orphaned. So
	// a taken lock is tried again for a while before giving up.
	deadline := time.Now().Add(livenessWait)
	delay := 10 * time.Millisecond
	for {
		ok, err := sess.TryLock(ctx, queue.OwnerLockName(owner))
		if err == nil && !ok && time.Now().After(deadline) {
			err = fmt.Errorf("engine lock %s is taken", owner)
		}
		if err != nil {
			sess.Close()
			return nil, nil, err
		}
		if ok {
			return sess.Close, sess.Lost(), nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			sess.Close()
			return nil, nil, ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, 250*time.Millisecond)
	}
}

// livenessWait is how long an engine waits for its own liveness lock
// while something else holds it a moment.
const livenessWait = 10 * time.Second

// recoverEvery is how often a running engine looks for the jobs of dead
// ones (Options.RecoverEvery).
func (e *Engine) recoverEvery() time.Duration {
	switch {
	case e.opts.RecoverEvery > 0:
		return e.opts.RecoverEvery
	case e.store.Postgres():
		return 3 * time.Second
	default:
		return 30 * time.Second
	}
}

// recoverTimeout bounds one look for dead engines' jobs.
const recoverTimeout = 30 * time.Second

// watchDeadOwners queues again, every recoverEvery until ctx ends, the
// running jobs of engines that died (Recover). It runs beside the claim
// loop, which waits for a free worker: with every worker busy on slow
// devices a dead node's jobs would otherwise wait as long, held by nobody.
func (e *Engine) watchDeadOwners(ctx context.Context) {
	t := time.NewTicker(e.recoverEvery())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, recoverTimeout)
		n, err := e.Recover(rctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			e.log.Error("recovering interrupted backups", "err", err)
		}
		if n > 0 {
			e.poke()
		}
	}
}

// RunJobs works only the given jobs, in this process, and returns when
// each is finished (wherever it ran) or ctx ends. report is called once
// per job as it finishes.
func (e *Engine) RunJobs(ctx context.Context, jobIDs []int64, report func(queue.Job)) error {
	pending := map[int64]bool{}
	for _, id := range jobIDs {
		if id != 0 {
			pending[id] = true
		}
	}
	if len(pending) == 0 {
		return nil
	}
	// Jobs finished here are announced at once; a slower poll catches
	// those another process ran.
	local := make(chan int64, len(pending))
	e.finishedMu.Lock()
	e.finished = func(id int64) {
		select {
		case local <- id:
		default: // the poll will see it
		}
	}
	e.finishedMu.Unlock()
	defer func() {
		e.finishedMu.Lock()
		e.finished = nil
		e.finishedMu.Unlock()
	}()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	// Sorted once here rather than by each of thousands of claims.
	only := slices.Sorted(maps.Keys(pending))
	go func() { done <- e.run(runCtx, only, nil) }()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	check := func(ids []int64, dropMissing bool) error {
		jobs, err := e.store.GetJobs(ctx, ids)
		if err != nil {
			return err
		}
		found := map[int64]bool{}
		for _, j := range jobs {
			found[j.ID] = true
			if !pending[j.ID] || j.State == queue.JobQueued || j.State == queue.JobRunning {
				continue
			}
			delete(pending, j.ID)
			if report != nil {
				report(j)
			}
		}
		if dropMissing {
			for _, id := range ids {
				if !found[id] { // its device was deleted meanwhile
					delete(pending, id)
				}
			}
		}
		return nil
	}
	// poll reports the pending jobs that ended elsewhere and drops those
	// whose device was deleted meanwhile. It reads only the states of
	// what may be thousands of jobs still queued or running.
	poll := func() error {
		ids := make([]int64, 0, len(pending))
		for id := range pending {
			ids = append(ids, id)
		}
		states, err := e.store.JobStates(ctx, ids)
		if err != nil {
			return err
		}
		var ended []int64
		for _, id := range ids {
			switch state, ok := states[id]; {
			case !ok:
				delete(pending, id) // its device was deleted meanwhile
			case state != queue.JobQueued && state != queue.JobRunning:
				ended = append(ended, id)
			}
		}
		if len(ended) == 0 {
			return nil
		}
		return check(ended, true)
	}
	for len(pending) > 0 {
		var err error
		select {
		case <-ctx.Done():
			stop()
			<-done
			return ctx.Err()
		case err = <-done:
			if err != nil {
				return err
			}
			done = nil // the run ended early; keep reporting what others finish
		case id := <-local:
			err = check([]int64{id}, false)
		case <-tick.C:
			err = poll()
		}
		if err != nil {
			return err
		}
	}
	stop()
	if done != nil {
		return <-done
	}
	return nil
}

// run works the queue (only the jobs only, when set) under the engine's
// current name until parent ends or its liveness lock is lost. report,
// when set, hears when the run starts taking jobs (true, once it holds
// its liveness lock) and when it stops (false, before its shutdown).
func (e *Engine) run(parent context.Context, only []int64, report func(running bool)) error {
	// The name this run works under, whatever Run does to the engine's
	// once it returns.
	owner := e.owner()
	release, lost, err := e.holdLiveness(parent, owner)
	if err != nil {
		return err
	}
	defer release()
	if report == nil {
		report = func(bool) {}
	}
	report(true)
	// Without its liveness lock the engine stops at once, as a shutdown
	// does, and its backups are cut off: others may be running them.
	ctx, cancelRun := context.WithCancel(parent)
	defer cancelRun()
	// alive ends when the run loses the store (its liveness lock, or its
	// claims failing): what its attempts still write is cut off then.
	alive, storeLost := context.WithCancel(context.Background())
	defer storeLost()
	var livenessLost atomic.Bool
	if lost != nil {
		go func() {
			select {
			case <-lost:
				livenessLost.Store(true)
				storeLost()
				cancelRun()
			case <-ctx.Done():
			}
		}()
	}
	if _, err := e.Recover(ctx); err != nil && ctx.Err() == nil {
		e.log.Error("recovering interrupted backups", "err", err)
	}

	// Job contexts outlive ctx by the shutdown grace period.
	jobCtx, hardStop := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), aliveKey{}, alive))
	defer hardStop()
	var wg sync.WaitGroup
	// The watchers end before the run returns.
	watchCtx, stopWatch := context.WithCancel(ctx)
	var watchers sync.WaitGroup
	watchers.Go(func() { e.watchCancels(watchCtx, owner) })
	watchers.Go(func() { e.watchDeadOwners(watchCtx) })
	defer func() {
		stopWatch()
		watchers.Wait()
	}()
	free := make(chan struct{}, e.opts.Workers)
	for range e.opts.Workers {
		free <- struct{}{}
	}
	// The claims failing since (the start of the first failed one), and
	// what ends the run when they fail for claimFailLimit.
	var failingSince time.Time
	var runErr error
	for ctx.Err() == nil {
		n := len(free)
		var claims []queue.Claim
		if n > 0 {
			began := time.Now()
			claims, err = e.claim(ctx, owner, min(n, 64), only)
			switch {
			case err == nil || ctx.Err() != nil:
				failingSince = time.Time{}
			case failingSince.IsZero() && time.Since(began) < claimFailLimit:
				failingSince = began
				e.log.Error("taking jobs from the queue failed; trying again", "err", err)
			default:
				if failingSince.IsZero() {
					failingSince = began
				}
				if d := time.Since(failingSince); d >= claimFailLimit {
					// The store does not answer: the run stops, and Run
					// starts another once it does (as after losing the
					// liveness lock), saying meanwhile that it does not run.
					runErr = fmt.Errorf("taking jobs from the queue failed for %s: %w", d.Round(time.Second), err)
				}
			}
			if runErr != nil {
				storeLost()
				break
			}
		}
		for _, c := range claims {
			<-free
			wg.Add(1)
			go func() {
				defer func() { free <- struct{}{}; wg.Done(); e.poke() }()
				e.work(jobCtx, c)
			}()
		}
		if len(claims) > 0 && len(claims) == n {
			// Every worker is busy; wait for one to come free.
			select {
			case <-ctx.Done():
			case <-e.wake:
			}
			continue
		}
		if len(claims) > 0 {
			continue // there may be more ready jobs
		}
		wait := e.opts.Poll
		if next, ok, err := e.store.NextJobAt(ctx); err == nil && ok {
			if d := time.Until(next); d < wait {
				wait = max(d, 10*time.Millisecond)
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
		case <-e.wake:
		case <-timer.C:
		}
		timer.Stop()
	}

	report(false)
	// Shutdown: let running backups finish for a while, then cut them off.
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	if livenessLost.Load() {
		hardStop()
	}
	select {
	case <-finished:
	case <-time.After(e.opts.ShutdownGrace):
		hardStop()
		<-finished
	}
	// Without the liveness lock the database is likely away: the jobs
	// left are queued again by whoever finds this engine dead, the next
	// run included, so the shutdown does not wait long to do it itself.
	wait := 30 * time.Second
	if livenessLost.Load() {
		wait = 5 * time.Second
	}
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
	defer cancel()
	res, err := e.store.InterruptJobs(cleanup, owner, e.opts.MaxInterruptions)
	if err != nil {
		err = fmt.Errorf("interrupting backups at shutdown: %w", err)
		switch {
		case livenessLost.Load():
			return fmt.Errorf("%w; %w", errLivenessLost, err)
		case runErr != nil:
			return fmt.Errorf("%w; %w", runErr, err)
		}
		return err
	}
	if res.Attempts > len(res.Work) {
		e.log.Info("backups interrupted by shutdown; backup jobs run again at the next start", "count", res.Attempts)
	}
	e.logWork(res)
	e.logGaveUp(res)
	if livenessLost.Load() {
		return errLivenessLost
	}
	return runErr
}

// claimFailLimit is how long the claims of a run may fail, one after the
// other, before the run stops as if the database had gone (the engine is
// then reported not running until a new run takes jobs again).
const claimFailLimit = 10 * time.Second

// logWork says which restores and pushes an interruption ended: never
// run again, their devices' state unknown. Their runners are told too
// (workInterrupted).
func (e *Engine) logWork(res queue.Interrupted) {
	for _, w := range res.Work {
		e.log.Error("a "+w.Kind+" was interrupted by a stopped process; the device's state is unknown and it does not run again: back the device up to see",
			"device_id", w.DeviceID, "job_id", w.JobID, "work_id", w.WorkID)
	}
	e.workInterrupted(res)
}

// logGaveUp names the devices whose jobs failed for having been
// interrupted too often.
func (e *Engine) logGaveUp(res queue.Interrupted) {
	for _, id := range res.GaveUp {
		e.log.Error("backup given up: the backup process stopped before it finished too many times",
			"device_id", id, "max_interruptions", e.opts.MaxInterruptions)
	}
}

// work runs one attempt and records how it ended. Whatever the device
// does, and even if our code panics on it, only this job fails.
func (e *Engine) work(parent context.Context, c queue.Claim) {
	ctx, stop := context.WithCancelCause(parent)
	defer stop(nil)
	e.runningMu.Lock()
	e.running[c.ID] = stop
	e.runningMu.Unlock()
	defer func() {
		e.runningMu.Lock()
		delete(e.running, c.ID)
		e.runningMu.Unlock()
	}()
	if c.Kind != "" && c.Kind != queue.KindBackup {
		e.runWork(parent, ctx, c)
		return
	}
	var o queue.Outcome
	began := time.Now()
	func() {
		defer func() {
			if r := recover(); r != nil {
				// The panic value may quote device output; log its type and
				// where it happened only.
				e.log.Error("backup panicked", "device_id", c.DeviceID, "job_id", c.ID,
					"panic_type", fmt.Sprintf("%T", r), "stack", string(debug.Stack()))
				o = queue.Outcome{Error: "internal error while backing up this device; the server log has details"}
			}
		}()
		o = e.attempt(ctx, c)
	}()
	if errors.Is(context.Cause(ctx), errCancelled) && !o.Success {
		o = queue.Outcome{Error: queue.ErrorCancelled, Reason: queue.ReasonCancelled, Cancelled: true}
	} else if parent.Err() != nil && !o.Success {
		// Shut down mid-backup: the shutdown marks it interrupted and
		// queues it again.
		return
	} else if o.Reason == reasonStore {
		// The database failed, not the device: the job is queued again
		// (an interruption, not an attempt) rather than recorded as the
		// device's failure.
		e.log.Warn("the database failed during a backup; the job is queued again", "device_id", c.DeviceID, "job_id", c.ID, "err", o.Error)
		e.giveBack(parent, c)
		return
	}
	o.FinishedAt = time.Now()
	rctx, cancel := detach(ctx)
	defer cancel()
	if err := e.record(rctx, c, o, o.FinishedAt.Sub(began)); errors.Is(err, queue.ErrJobNotOwned) {
		// Taken for dead meanwhile (a lost database connection): the job
		// was queued again and its result is another attempt's to record.
		// (Or the device was deleted while it was backed up.)
		e.log.Warn("backup result dropped: the job is no longer this engine's (queued again while it ran, or its device deleted)",
			"device_id", c.DeviceID, "job_id", c.ID)
	} else if err != nil {
		// The job is still this engine's and running: left so, it would
		// hold its device (no other backup of it starts) until this engine
		// restarts, as nobody reaps the jobs of a live engine.
		e.log.Error("recording a backup failed; queuing the job again", "device_id", c.DeviceID, "job_id", c.ID, "err", err)
		e.giveBack(parent, c)
	}
}

// aliveKey holds, in the context of a job the engine runs, the run's
// alive context.
type aliveKey struct{}

// detach is ctx without its cancellation, so that an attempt whose
// collection a shutdown cut off is still recorded, but ended when the run
// running it loses the store: the job is then no longer surely its own,
// and a silent database would hold the write.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	d, cancel := context.WithCancel(context.WithoutCancel(ctx))
	alive, ok := ctx.Value(aliveKey{}).(context.Context)
	if !ok {
		return d, cancel
	}
	stop := context.AfterFunc(alive, cancel)
	return d, func() { stop(); cancel() }
}

// giveBackTries bounds the tries to give back an attempt whose result
// could not be recorded; they pause 1 s, 2 s, 4 s, … in between.
const giveBackTries = 5

// giveBack queues again, as interrupted (not counted as an attempt), a
// claimed attempt whose result could not be recorded, while it is still
// this engine's. It tries again a few times while the database refuses;
// a shutdown ends the tries, as it interrupts every job of the engine.
func (e *Engine) giveBack(parent context.Context, c queue.Claim) {
	delay := time.Second
	for try := 1; ; try++ {
		dctx, release := detach(parent)
		ctx, cancel := context.WithTimeout(dctx, 30*time.Second)
		res, err := e.store.InterruptJob(ctx, c, e.opts.MaxInterruptions)
		cancel()
		release()
		if err == nil {
			if res.Attempts == 0 {
				e.log.Warn("the backup whose result was not recorded is no longer this engine's; left as it is",
					"device_id", c.DeviceID, "job_id", c.ID)
			}
			e.logWork(res)
			e.logGaveUp(res)
			e.poke()
			return
		}
		if try >= giveBackTries {
			e.log.Error("queuing again a backup whose result was not recorded failed; it stays running until this engine restarts",
				"device_id", c.DeviceID, "job_id", c.ID, "tries", try, "err", err)
			return
		}
		e.log.Warn("queuing again a backup whose result was not recorded failed; trying again",
			"device_id", c.DeviceID, "job_id", c.ID, "try", try, "err", err)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-parent.Done():
			t.Stop()
			return
		}
		delay *= 2
	}
}

// record stores how an attempt ended (FinishJob), counts it in the
// metrics, tells a waiting RunJobs and logs it. took is how long the
// collection ran.
func (e *Engine) record(ctx context.Context, c queue.Claim, o queue.Outcome, took time.Duration) error {
	finish, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.store.FinishJob(finish, c, o); err != nil {
		return err
	}
	// Counted once recorded: a result uploaded again after a failed
	// recording, or dropped for a job no longer ours, is not another one.
	metrics.BackupFinished(took, o.Success, o.Reason)
	e.finishedMu.Lock()
	notify := e.finished
	e.finishedMu.Unlock()
	if notify != nil {
		notify(c.ID)
	}
	level, msg := slog.LevelInfo, "backup succeeded"
	attrs := []any{"device_id", c.DeviceID, "job_id", c.ID, "attempt", c.Attempt,
		"duration_ms", o.FinishedAt.Sub(c.StartedAt).Milliseconds()}
	switch {
	case o.Success:
		attrs = append(attrs, "changed", o.Changed, "first", o.First, "bytes", len(o.Text))
	case o.RetryAt != nil:
		level, msg = slog.LevelWarn, "backup failed; will retry"
		attrs = append(attrs, "reason", o.Reason, "error", o.Error, "retry_at", o.RetryAt.UTC().Format(time.RFC3339))
	default:
		level, msg = slog.LevelWarn, "backup failed"
		// Collection errors name the stage and never quote the device.
		attrs = append(attrs, "reason", o.Reason, "error", o.Error)
	}
	e.log.Log(context.Background(), level, msg, attrs...)
	return nil
}

// attempt backs the claimed device up once.
func (e *Engine) attempt(ctx context.Context, c queue.Claim) queue.Outcome {
	t, err := e.target(ctx, c.DeviceID)
	if _, ok := errors.AsType[*storeError](err); ok {
		return queue.Outcome{Error: err.Error(), Reason: reasonStore}
	}
	if err != nil {
		return queue.Outcome{Error: err.Error(), Reason: TargetFailureReason(err)}
	}
	ctx, cancel := context.WithTimeout(ctx, t.Timeouts.Job)
	defer cancel()
	tr := &collect.Transcript{Max: SessionLogMax}
	t.Transcript = tr
	res, err := e.collect(ctx, t)
	o := e.outcome(ctx, c, t.Platform, t.PinnedHostKey != nil, CaptureOf(res, err))
	if !o.Success {
		o.Log, o.LogTruncated = SessionLog(tr)
	}
	return o
}

// SessionLogMax bounds the session log kept of a failed attempt: its
// first 64 KiB, which hold the login and the first commands' answers.
const SessionLogMax = 64 << 10

// LogSegment is one run of a session log in one direction, as stored.
type LogSegment struct {
	Kind string `json:"kind"` // collect.SegmentSent, SegmentReceived or SegmentNote
	Text string `json:"text"`
}

// SessionLog is a transcript as an attempt's stored log (JSON of
// LogSegment, passwords masked), and whether it was cut short; "" for an
// empty one.
func SessionLog(tr *collect.Transcript) (string, bool) {
	segs, truncated := tr.Segments()
	if len(segs) == 0 {
		return "", false
	}
	out := make([]LogSegment, len(segs))
	for i, sg := range segs {
		out[i] = LogSegment{Kind: sg.Kind, Text: sg.Text}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return "", false // strings always marshal
	}
	return string(raw), truncated
}

// Capture is what one collection from a device produced, wherever it
// ran: in this process, or at a remote collector that uploaded it. The
// server turns it into the attempt's outcome the same way whatever made
// it (the noise rules, the comparison with the previous version, the
// storage and the events are all the server's), so a device's backups
// are the same in every zone.
type Capture struct {
	// Text is the collected text (collect.Result.Text) when the
	// collection succeeded.
	Text string
	// HostKey is the SSH host key the device presented, in wire format
	// (collect.Result.HostKey): pinned on first use, or recorded as the
	// key an operator may accept after a host_key_changed failure.
	HostKey []byte
	// Reason and Error describe a failed collection: its class
	// (collect.Reason) and its message, written for the operator and
	// free of secrets and configuration text. Error is empty when the
	// collection succeeded.
	Reason string
	Error  string
}

// CaptureCancelled is a capture's Reason when the collection was stopped
// because an operator cancelled the job: the attempt ends as cancelled.
const CaptureCancelled = "cancelled"

// Failed reports whether the collection failed.
func (cp Capture) Failed() bool { return cp.Error != "" || cp.Reason != "" }

// CaptureOf is the capture of a collect.Collect call.
func CaptureOf(res collect.Result, err error) Capture {
	if err == nil {
		return Capture{Text: res.Text, HostKey: res.HostKey}
	}
	cp := Capture{HostKey: res.HostKey, Reason: collect.Reason(err), Error: err.Error()}
	if cp.Error == "" {
		cp.Error = "the collection failed"
	}
	return cp
}

// outcome turns a capture of the claimed device into the attempt's
// outcome: a failure classified (reachability, retry, a changed host
// key to accept) or a success normalised and compared with the previous
// version, noise ignored. platform is the device's, pinned whether it has
// a host key pinned.
func (e *Engine) outcome(ctx context.Context, c queue.Claim, platform string, pinned bool, cp Capture) queue.Outcome {
	if cp.Failed() {
		reason := cp.Reason
		if reason == "" {
			reason = collect.ReasonProtocol
		}
		msg := cp.Error
		if msg == "" {
			msg = "the collection failed"
		}
		reachable := reason != collect.ReasonConnect && reason != collect.ReasonRefused
		o := queue.Outcome{Error: msg, Reason: reason, Reachable: &reachable}
		if reason == collect.ReasonHostKeyChanged && cp.HostKey != nil {
			o.PendingHostKey = cp.HostKey
		}
		if collect.RetryableReason(reason) && c.Attempt < e.opts.MaxAttempts {
			at := time.Now().Add(e.backoff(c.Attempt))
			o.RetryAt = &at
		}
		return o
	}
	reachable := true
	o := queue.Outcome{Reachable: &reachable}
	if !pinned && cp.HostKey != nil {
		o.PinHostKey = cp.HostKey
	}
	text := Normalise(cp.Text)
	if text == "" {
		o.Error, o.Reason = "the device returned no configuration text", ReasonEmpty
		return o
	}
	dctx, release := detach(ctx)
	defer release()
	store, cancelStore := context.WithTimeout(dctx, 30*time.Second)
	defer cancelStore()
	hash := snapstore.Hash(text)
	changed, first, err := e.changed(store, c.DeviceID, platform, hash, text)
	if err != nil {
		o.Error, o.Reason = "comparing with the previous version failed: "+err.Error(), reasonStore
		return o
	}
	o.Success, o.Text, o.Hash, o.Changed, o.First = true, text, hash, changed, first
	return o
}

// RecordFailure ends a claimed attempt that failed before any collection
// (the device's target could not be gathered), as the engine's own
// attempt does.
func (e *Engine) RecordFailure(ctx context.Context, c queue.Claim, msg, reason string) (queue.Outcome, error) {
	o := queue.Outcome{Error: msg, Reason: reason, FinishedAt: time.Now()}
	return o, e.record(ctx, c, o, 0)
}

// RecordCapture ends a claimed attempt whose collection ran elsewhere (a
// remote collector uploaded it): the capture becomes the outcome exactly
// as a collection in this process does, and is recorded as the engine
// records its own (FinishJob, metrics, log). took is how long the
// collection ran, for the metrics.
func (e *Engine) RecordCapture(ctx context.Context, c queue.Claim, cp Capture, took time.Duration) (queue.Outcome, error) {
	d, err := e.store.GetDevice(ctx, c.DeviceID)
	if err != nil {
		return queue.Outcome{}, fmt.Errorf("loading the device: %w", err)
	}
	pinned, _, err := e.store.HostKeys(ctx, c.DeviceID)
	if err != nil {
		return queue.Outcome{}, fmt.Errorf("loading the device's host key: %w", err)
	}
	var o queue.Outcome
	if cp.Reason == CaptureCancelled {
		o, err = e.cancelledCapture(ctx, c)
		if err != nil {
			return queue.Outcome{}, err
		}
	} else {
		o = e.outcome(ctx, c, d.Platform, pinned != nil, cp)
	}
	o.FinishedAt = time.Now()
	return o, e.record(ctx, c, o, took)
}

// ErrorUnaskedCancel is the error of a remote attempt its collector
// reported cancelled when no operator had asked to stop it.
const ErrorUnaskedCancel = "the collector reported this backup cancelled, but no one asked to cancel it; the backup did not run"

// cancelledCapture is the outcome of a capture its collector reported
// cancelled. Only an operator cancels a job (the job's cancel_requested,
// which stays set once set); a cancellation nobody asked for is a
// collector's fault, not a decision: the attempt fails, so the backup
// that did not happen shows in the history and counts towards the
// device's failure alerts, instead of ending quietly as if an operator
// had chosen to skip it.
func (e *Engine) cancelledCapture(ctx context.Context, c queue.Claim) (queue.Outcome, error) {
	owner := ""
	if c.Owner != nil {
		owner = *c.Owner
	}
	asked, err := e.store.CancelRequested(ctx, owner)
	if err != nil {
		return queue.Outcome{}, fmt.Errorf("checking the job's cancellation: %w", err)
	}
	if slices.Contains(asked, c.ID) {
		return queue.Outcome{Error: queue.ErrorCancelled, Reason: queue.ReasonCancelled, Cancelled: true}, nil
	}
	e.log.Warn("a collector reported a backup cancelled that no one cancelled; recorded as failed",
		"job_id", c.ID, "device_id", c.DeviceID)
	return queue.Outcome{Error: ErrorUnaskedCancel, Reason: collect.ReasonProtocol}, nil
}

// backoff is the wait before retry number attempt.
func (e *Engine) backoff(attempt int) time.Duration {
	d := e.opts.RetryBackoff << max(attempt-1, 0)
	if d <= 0 || d > 10*time.Minute {
		d = 10 * time.Minute
	}
	return d
}

// changed compares text (normalised) with the device's previous good
// version, noise ignored. first is set when there is no previous version:
// the device's first backup, which is not a change. The stripped form of
// the previous version comes from e.compare when it holds it; otherwise
// the previous version is read and compared in full.
func (e *Engine) changed(ctx context.Context, deviceID int64, platform, hash, text string) (changed, first bool, err error) {
	prevHash, ok, err := e.store.LatestGoodSnapshot(ctx, deviceID)
	if err != nil {
		return false, false, err
	}
	if !ok {
		return false, true, nil
	}
	if prevHash == hash {
		return false, false, nil
	}
	rules, err := e.store.NoiseRules(ctx)
	if err != nil {
		return false, false, err
	}
	key, err := noiseFingerprint(platform, rules)
	if err != nil {
		return false, false, err
	}
	cf := e.compare.filter(key, func() cachedFilter {
		f, err := NewNoiseFilter(platform, rules)
		if err == nil {
			return cachedFilter{f: f}
		}
		builtin, berr := NewNoiseFilter(platform, nil)
		return cachedFilter{f: builtin, warn: err, err: berr}
	})
	if cf.warn != nil {
		// A bad user rule must not stop backups: compare with the
		// built-in rules only.
		e.log.Warn("ignoring the user's noise rules", "err", cf.warn)
	}
	if cf.err != nil {
		return false, false, cf.err
	}
	stripped := sha256.Sum256([]byte(cf.f.Strip(text)))
	if prev, ok := e.compare.lookup(deviceID, prevHash, key); ok {
		changed = prev != stripped
	} else {
		prev, err := e.store.SnapshotText(ctx, prevHash)
		if err != nil {
			return false, false, err
		}
		changed = Changed(prev, text, cf.f)
	}
	e.compare.remember(deviceID, strippedVersion{snapshot: hash, filter: key, stripped: stripped})
	return changed, false, nil
}

// target gathers what collecting from a device needs: address, platform,
// commands and its opened secrets.
func (e *Engine) target(ctx context.Context, deviceID int64) (collect.Target, error) {
	t, err := DeviceTarget(ctx, e.store, e.sealer, deviceID)
	t.Timeouts = e.opts.Timeouts
	if t.Timeouts.Job <= 0 {
		t.Timeouts.Job = 5 * time.Minute
	}
	return t, err
}

// DeviceTarget gathers what collecting from a stored device needs:
// address, platform, template commands, pinned host key and its
// credential's opened secrets. The timeouts are the caller's. The web
// interface's "Test against a device" uses it too.
func DeviceTarget(ctx context.Context, store *db.Store, sealer *secret.Sealer, deviceID int64) (collect.Target, error) {
	d, err := store.GetDevice(ctx, deviceID)
	if err != nil {
		return collect.Target{}, storeFailure(fmt.Errorf("loading the device: %w", err))
	}
	t := collect.Target{
		Platform: d.Platform, Host: d.Host, Port: d.Port, Method: d.LoginMethod,
		Encoding: d.Encoding,
	}
	// Link-local and cloud metadata addresses are refused when
	// connecting, after DNS, unless the allow list holds them.
	outbound, err := netguard.Load(ctx, store)
	if err != nil {
		return t, err
	}
	t.Control = outbound.Control
	if d.CredentialID == nil {
		return t, ErrNoCredential
	}
	// The credential goes only to an address it was sent to or confirmed
	// for: checked before it is even opened.
	if t.PinnedHostKey, _, err = store.HostKeys(ctx, deviceID); err != nil {
		return t, storeFailure(fmt.Errorf("loading the device's host key: %w", err))
	}
	if inventory.AddressUnconfirmed(d, t.PinnedHostKey != nil) {
		return t, &AddressUnconfirmedError{DeviceID: d.ID, Pinned: *d.AddressPin, Address: d.Address()}
	}
	if d.AddressPin == nil {
		if err := store.PinAddress(ctx, d.ID, d.Address()); err != nil {
			return t, storeFailure(err)
		}
	}
	if err := openCredential(ctx, store, sealer, *d.CredentialID, &t); err != nil {
		return t, err
	}
	if d.TemplateID != nil {
		if t.Commands, err = templateCommands(ctx, store, *d.TemplateID); err != nil {
			return t, err
		}
	}
	return t, nil
}

// openCredential sets t's login from the stored credential id, its
// secrets opened.
func openCredential(ctx context.Context, store *db.Store, sealer *secret.Sealer, id int64, t *collect.Target) error {
	cred, err := store.GetCredential(ctx, id)
	if err != nil {
		return storeFailure(fmt.Errorf("loading the device's credential: %w", err))
	}
	t.Username = cred.Username
	open := func(sealed []byte, purpose string) (string, error) {
		if sealed == nil {
			return "", nil
		}
		v, err := sealer.Open(sealed, purpose)
		if err != nil {
			return "", fmt.Errorf("credential %q: %w", cred.Name, err)
		}
		return v, nil
	}
	if t.Password, err = open(cred.Password, secret.PurposePassword); err != nil {
		return err
	}
	if t.EnablePassword, err = open(cred.EnablePassword, secret.PurposeEnablePassword); err != nil {
		return err
	}
	key, err := open(cred.PrivateKey, secret.PurposePrivateKey)
	if err != nil {
		return err
	}
	if key != "" {
		t.PrivateKey = []byte(key)
	}
	return nil
}

// templateCommands are the command lines of the template id; none when
// it was deleted meanwhile (the platform's own then run).
func templateCommands(ctx context.Context, store *db.Store, id int64) ([]string, error) {
	tpl, err := store.GetTemplate(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, storeFailure(fmt.Errorf("loading the device's template: %w", err))
	}
	return commandLines(tpl.Commands), nil
}

// ReasonAddressUnconfirmed is the failure reason of an attempt that did
// not log in because the device's address changed and nobody confirmed it
// yet (AddressUnconfirmedError).
const ReasonAddressUnconfirmed = "address_unconfirmed"

// AddressUnconfirmedError is DeviceTarget's refusal to send a device's
// credential to an address nobody confirmed: see
// inventory.AddressUnconfirmed. Pinned and Address are in the form of
// db.Device.Address.
type AddressUnconfirmedError struct {
	DeviceID        int64
	Pinned, Address string
}

func (e *AddressUnconfirmedError) Error() string {
	return fmt.Sprintf("the device's address changed to %s since its credential was last sent (to %s); "+
		"it is not logged into until a user allowed to use the credential confirms the new address "+
		"(the device's page, or backupd device accept-address %d)",
		inventory.ShowAddress(e.Address), inventory.ShowAddress(e.Pinned), e.DeviceID)
}

// TargetFailureReason is the failure reason of an attempt whose target
// could not be gathered (DeviceTarget's error).
func TargetFailureReason(err error) string {
	var ae *AddressUnconfirmedError
	switch {
	case errors.As(err, &ae):
		return ReasonAddressUnconfirmed
	case errors.Is(err, ErrNoCredential):
		return ReasonNoCredential
	}
	return ReasonConfig
}

// ErrNoCredential is the failure of a device without a credential.
var ErrNoCredential = errors.New("the device has no credential; assign one to back it up")

// Failure reasons of the engine's own, besides app/collect's.
const (
	ReasonNoCredential = "no_credential"
	// ReasonConfig: what the attempt needs could not be read (the
	// credential's secret does not open, the device is gone).
	ReasonConfig = "config"
	// ReasonEmpty: the device answered with no configuration text.
	ReasonEmpty = "empty"
)

// reasonStore is the reason of an attempt the database failed (reading
// what the collection needs, or comparing with the previous version):
// the engine queues such a job again instead of recording it.
const reasonStore = "store"

// storeError is a failure of the store, not of the device or its
// settings, while an attempt is prepared.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// storeFailure marks err as the store's, unless the row is missing (a
// device or credential deleted meanwhile, which is the device's matter).
func storeFailure(err error) error {
	if errors.Is(err, db.ErrNotFound) {
		return err
	}
	return &storeError{err}
}

// commandLines splits a template's command text into commands, skipping
// blank lines.
func commandLines(text string) []string {
	var out []string
	for line := range strings.SplitSeq(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}
