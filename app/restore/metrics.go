package restore

import (
	"context"
	"maps"
	"slices"
	"time"

	"backupd/app/backup"
	"backupd/app/collect/driver"
	"backupd/app/metrics"
	"backupd/db"
	"backupd/db/queue"
)

// A restore's end is counted in backupd_restores_total by method and
// result where it ends: the runner's finish, and an interruption the
// engine found (a shutdown, a crash found at the next start, a panic),
// which ends the restore without its runner. A change set's push to one
// device is counted in backupd_pushes_total by platform and result the
// same way: the push runner's end, or the engine's interruption.

func init() {
	// Every method's series from the start, at 0 (see
	// metrics.RestoreMethods), and every platform's that can push (the
	// built-in platforms are registered by driver's init, which runs
	// first).
	metrics.RestoreMethods(slices.Sorted(maps.Keys(methods))...)
	metrics.PushPlatforms(pushPlatforms()...)
}

// pushPlatforms are the built-in platforms that take a push, and
// metrics.PushPlatformCustom for the administrator's.
func pushPlatforms() []string {
	var out []string
	for _, id := range driver.BuiltinIDs() {
		if p, ok := driver.Lookup(id); ok {
			if _, ok := PusherOf(p); ok {
				out = append(out, id)
			}
		}
	}
	return append(out, metrics.PushPlatformCustom)
}

// countEnd counts a restore of method that ended in state.
func countEnd(method, state string) { metrics.RestoreEnded(method, state) }

var _ backup.WorkInterruptObserver = (*Runner)(nil)

// WorkInterrupted counts the restores the engine ended as interrupted
// (backup.WorkInterruptObserver). Their method is read back from the
// store; "unknown" when it cannot be.
func (rn *Runner) WorkInterrupted(ends []queue.WorkEnd) {
	for _, w := range ends {
		if w.Kind != queue.KindRestore || w.State != queue.JobFailed {
			continue
		}
		method := "unknown"
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if r, err := rn.Store.Restore(ctx, w.WorkID); err == nil {
			method = r.Method
		}
		cancel()
		countEnd(method, db.RestoreInterrupted)
	}
}

var _ backup.WorkInterruptObserver = PushRunner{}

// WorkInterrupted counts the pushes the engine ended as interrupted
// (backup.WorkInterruptObserver); it stands in for the embedded Runner's,
// which counts restores only.
func (pr PushRunner) WorkInterrupted(ends []queue.WorkEnd) {
	for _, w := range ends {
		if w.Kind != queue.KindPush || w.State != queue.JobFailed {
			continue
		}
		pr.countPush(w.DeviceID, db.TargetInterrupted)
	}
}

// countPush counts a push to device deviceID that ended in state, under
// the device's platform read back from the store: a built-in platform's
// ID, metrics.PushPlatformCustom for an administrator's (their IDs are
// not bounded by backupd), "unknown" when it cannot be read.
func (rn *Runner) countPush(deviceID int64, state string) {
	platform := "unknown"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if d, err := rn.Store.GetDevice(ctx, deviceID); err == nil {
		platform = d.Platform
		if !driver.IsBuiltin(platform) {
			platform = metrics.PushPlatformCustom
		}
	}
	cancel()
	metrics.PushEnded(platform, state)
}
