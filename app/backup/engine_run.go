package backup

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"backupd/app/metrics"
)

// An engine of `serve` runs for as long as the process lives. A run ends
// early when the database goes away (its liveness lock's connection is
// lost, or the shutdown of the run cannot reach the database) or cannot
// start (the database refuses, a lock file cannot be made); Run then waits
// and starts another, with a pause that grows from RestartBackoff to
// restartBackoffMax, however long the outage, on PostgreSQL and SQLite
// alike. Meanwhile Status and Ready say that the engine does not run, the
// backupd_engine_running gauge is 0, and the log says so once a minute.

// restartBackoffMax bounds the pause between two tries to start the
// engine again: a run starts within that long of the database answering.
const restartBackoffMax = 10 * time.Second

// stillDownLogEvery is how often an engine that cannot start says so again.
const stillDownLogEvery = time.Minute

// EngineStatus is what an engine's Run is doing.
type EngineStatus struct {
	// Running is set while a run works the queue (it holds its liveness
	// lock and takes jobs).
	Running bool
	// Since is when it last started or stopped running (zero before Run).
	Since time.Time
	// Failures counts the runs that ended or could not start, one after
	// the other, since the engine last ran (0 while it runs).
	Failures int
	// LastError is the last failure's message; it may name the database's
	// address: for the log, not for unauthenticated answers.
	LastError string
	// Restarts counts the runs started after a failure.
	Restarts int
}

// engineState holds the status, and a channel closed at each change.
type engineState struct {
	mu      sync.Mutex
	status  EngineStatus
	started bool // Run was called
	changed chan struct{}
}

func (s *engineState) update(fn func(*EngineStatus)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.status)
	if s.changed != nil {
		close(s.changed)
	}
	s.changed = make(chan struct{})
}

// Status is what Run is doing now.
func (e *Engine) Status() EngineStatus {
	e.state.mu.Lock()
	defer e.state.mu.Unlock()
	return e.state.status
}

// ErrEngineNotRunning is Ready's error while the engine does not work the
// queue.
var ErrEngineNotRunning = errors.New("the backup engine is not running")

// Ready reports whether the engine works the queue: nil when it does, an
// error wrapping ErrEngineNotRunning that says since when and how often
// it tried when not. An engine still starting (no run failed yet) is
// waited for until ctx ends. The error holds no database error text.
func (e *Engine) Ready(ctx context.Context) error {
	for {
		e.state.mu.Lock()
		st, started, changed := e.state.status, e.state.started, e.state.changed
		if changed == nil {
			e.state.changed = make(chan struct{})
			changed = e.state.changed
		}
		e.state.mu.Unlock()
		switch {
		case st.Running:
			return nil
		case started && st.Failures > 0:
			return fmt.Errorf("%w: it stopped %s ago and waits for the database (%d tries so far; the server log says why)",
				ErrEngineNotRunning, time.Since(st.Since).Round(time.Second), st.Failures)
		case started && !st.Since.IsZero():
			return fmt.Errorf("%w: it is shutting down", ErrEngineNotRunning)
		}
		select {
		case <-ctx.Done():
			if !started {
				return fmt.Errorf("%w: it has not started", ErrEngineNotRunning)
			}
			return fmt.Errorf("%w: it is starting", ErrEngineNotRunning)
		case <-changed:
		}
	}
}

// setRunning records that a run works the queue (on) or stopped taking
// jobs (off).
func (e *Engine) setRunning(on bool) {
	now := time.Now()
	var down time.Duration
	var tries int
	restarted := false
	e.state.update(func(s *EngineStatus) {
		if s.Running == on {
			return
		}
		if on && s.Failures > 0 {
			restarted = true
			s.Restarts++
			down, tries = now.Sub(s.Since), s.Failures
			s.Failures, s.LastError = 0, ""
		}
		s.Running, s.Since = on, now
	})
	metrics.EngineRunning(on)
	if restarted {
		metrics.EngineRestarted()
		e.log.Info("backup engine running again", "owner", e.owner(), "stopped_for", down.Round(time.Second).String(), "tries", tries)
	}
}

// Run works the queue until ctx ends, then shuts down gracefully: it stops
// taking jobs, gives running backups ShutdownGrace to finish, interrupts
// the rest (they are queued again for the next start) and returns. A run
// that ends early, or cannot start, is followed by another after a pause
// (see the top of this file) for as long as ctx lasts; only the error of
// the last run, the one ctx ended, is returned.
func (e *Engine) Run(ctx context.Context) error {
	e.state.mu.Lock()
	e.state.started = true
	e.state.mu.Unlock()
	metrics.EngineRunning(false)
	var lastLog time.Time
	for {
		err := e.run(ctx, nil, e.setRunning)
		e.setRunning(false)
		if ctx.Err() != nil {
			return err
		}
		if err == nil {
			err = errors.New("the run ended without a cause")
		}
		// The run's name goes with it: its jobs still marked running are
		// a dead engine's now, queued again by the next run (here or on
		// another node), which works under a new name.
		owner := e.owner()
		e.rename()
		var failures int
		e.state.update(func(s *EngineStatus) {
			s.Failures++
			s.LastError = err.Error()
			failures = s.Failures
		})
		wait := e.restartWait(failures)
		e.log.Debug("backup engine run failed", "owner", owner, "tries", failures, "err", err, "retry_in", wait.Round(time.Millisecond).String())
		switch {
		case errors.Is(err, errLivenessLost):
			e.log.Error("lost the database connection that shows this engine alive; its running backups were stopped and it starts again",
				"owner", owner, "err", err, "retry_in", wait.Round(time.Millisecond).String())
			lastLog = time.Now()
		case failures == 1:
			e.log.Error("backup engine stopped; it starts again once the database answers",
				"owner", owner, "err", err, "retry_in", wait.Round(time.Millisecond).String())
			lastLog = time.Now()
		case time.Since(lastLog) >= stillDownLogEvery:
			st := e.Status()
			e.log.Warn("backup engine still not running: waiting for the database",
				"stopped_for", time.Since(st.Since).Round(time.Second).String(), "tries", failures, "err", err)
			lastLog = time.Now()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// restartWait is the pause before try number failures+1 to start: from
// RestartBackoff doubling to restartBackoffMax, each a random 80–100 % of
// that, so that the nodes of a cluster do not all knock at once.
func (e *Engine) restartWait(failures int) time.Duration {
	d := e.opts.RestartBackoff
	for i := 1; i < failures && d < restartBackoffMax; i++ {
		d *= 2
	}
	d = min(d, max(restartBackoffMax, e.opts.RestartBackoff))
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}
