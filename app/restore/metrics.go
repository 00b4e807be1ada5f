package restore

import (
	"context"
	"maps"
	"slices"
	"time"

	"backupd/app/backup"
	"backupd/app/metrics"
	"backupd/db"
	"backupd/db/queue"
)

// A restore's end is counted in backupd_restores_total by method and
// result where it ends: the runner's finish, and an interruption the
// engine found (a shutdown, a crash found at the next start, a panic),
// which ends the restore without its runner.

func init() {
	// Every method's series from the start, at 0 (see
	// metrics.RestoreMethods).
	metrics.RestoreMethods(slices.Sorted(maps.Keys(methods))...)
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
