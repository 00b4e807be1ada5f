package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"backupd/db/engine"

	"github.com/google/uuid"
)

// ErrJobNotOwned is FinishJob's error for an attempt whose job is no
// longer its own: it was queued again (its engine was taken for dead) or
// ended otherwise meanwhile. Nothing of the attempt is recorded.
var ErrJobNotOwned = errors.New("the job is no longer this attempt's: it was queued again or ended meanwhile")

// Claim is a job a worker took, with the backups row of this attempt.
type Claim struct {
	Job
	BackupID  string
	StartedAt time.Time
}

// The claim's statements, prepared when the store opens (jobQueries). On
// PostgreSQL several nodes claim at once, each on its own connection: the
// rows a claim picks are locked as it picks them, and those another
// node's claim holds are skipped rather than waited for (and, without the
// lock, taken a second time once that claim commits). SQLite has one
// writer, so its claims never overlap.
func claimQuery(d engine.Dialect, kinds string) string {
	return `UPDATE jobs SET state = 'running', owner = ?, started_at = ?,
				attempt = attempt + 1, finished_at = NULL, error = NULL, error_reason = NULL
			WHERE state = 'queued' AND id ` + d.InLockedPick(`SELECT id FROM jobs WHERE state = 'queued' AND zone_id = 1 AND not_before <= ?
				AND `+kinds+` ORDER BY not_before, id LIMIT ?`) + `
			RETURNING ` + Columns
}

// claimAmongQuery is claimQuery among the jobs of one JSON parameter,
// however many: no statement with thousands of placeholders to parse per
// claim.
func claimAmongQuery(d engine.Dialect, kinds string) string {
	return `UPDATE jobs SET state = 'running', owner = ?, started_at = ?,
				attempt = attempt + 1, finished_at = NULL, error = NULL, error_reason = NULL
			WHERE state = 'queued' AND id ` + d.InLockedPick(`SELECT id FROM jobs WHERE state = 'queued' AND zone_id = 1 AND not_before <= ?
				AND `+kinds+` AND id IN (SELECT CAST(value AS BIGINT) FROM `+d.JSONEach()+`) ORDER BY not_before, id LIMIT ?`) + `
			RETURNING ` + Columns
}

const (
	// insertAttemptQuery is the backups row of an attempt that starts.
	insertAttemptQuery = `INSERT INTO backups (id, device_id, started_at, finished_at, success, error_message, snapshot_hash,
			trigger, changed, first_backup, duration_ms, bytes) VALUES (?, ?, ?, NULL, ?, NULL, NULL, ?, ?, ?, NULL, NULL)`
	claimBackupQuery = `UPDATE jobs SET backup_id = ? WHERE id = ?`
)

// readyQueueQuery lists the ready jobs of the server's zone whose kind
// kindsCond allows, in claim order.
func readyQueueQuery(kinds string) string {
	return `SELECT id FROM jobs WHERE state = 'queued' AND zone_id = 1 AND not_before <= ? AND ` + kinds + ` ORDER BY not_before, id LIMIT ?`
}

// backupKinds is the kinds condition of a backup engine's claims.
var backupKinds = kindsCond([]string{KindBackup})

// kindsCond is the condition keeping the jobs of kinds (known kinds,
// sorted, no repeats), spelled with constants: the same kinds always make
// the same statement, so that the backup engine's claims run prepared.
func kindsCond(kinds []string) string {
	return `kind IN ('` + strings.Join(kinds, `', '`) + `')`
}

// ErrUnknownKind is a claim asking for a job kind that does not exist.
var ErrUnknownKind = errors.New("unknown job kind")

// checkKinds sorts kinds and drops repeats, or refuses one that is not a
// job kind (kindsCond places them in the statement).
func checkKinds(kinds []string) ([]string, error) {
	if len(kinds) == 0 {
		return nil, fmt.Errorf("%w: no kind given", ErrUnknownKind)
	}
	out := slices.Compact(slices.Sorted(slices.Values(kinds)))
	for _, k := range out {
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("%w %q", ErrUnknownKind, k)
		}
	}
	return out, nil
}

// ClaimJobs moves up to n ready backup jobs of the server's own zone
// (oldest first; other zones' jobs are leased to their collectors) to
// running under owner, each with a fresh backups row that shows it
// running. With only non-empty, it claims only among those job IDs
// (sorted ascending, a caller claiming often from a long list saves a
// sort per claim). Restore and push jobs are left to ClaimJobsOfKinds: a
// backup request that joined one (EnqueueTx) hands its caller that job's
// ID, and a backup run must not take it.
func (jq *Queue) ClaimJobs(ctx context.Context, owner string, n int, only []int64) ([]Claim, error) {
	return jq.claimJobs(ctx, owner, n, only, backupKinds)
}

// ClaimJobsOfKinds is ClaimJobs for the jobs of kinds (KindBackup,
// KindRestore, KindPush). The backups row of a restore or push job's
// claim is its first backup, the one taken before the device is changed.
func (jq *Queue) ClaimJobsOfKinds(ctx context.Context, owner string, n int, only []int64, kinds []string) ([]Claim, error) {
	kinds, err := checkKinds(kinds)
	if err != nil {
		return nil, fmt.Errorf("claim jobs: %w", err)
	}
	return jq.claimJobs(ctx, owner, n, only, kindsCond(kinds))
}

func (jq *Queue) claimJobs(ctx context.Context, owner string, n int, only []int64, kinds string) ([]Claim, error) {
	if n <= 0 {
		return nil, nil
	}
	if !slices.IsSorted(only) {
		only = slices.Sorted(slices.Values(only))
	}
	now := time.Now().UTC()
	stamp := backupTime(now)
	var claims []Claim
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		claims = claims[:0]
		q := jq.prepared(tx)
		query, amongQuery := claimQuery(jq.d, kinds), claimAmongQuery(jq.d, kinds)
		args := []any{owner, stamp, stamp}
		if len(only) > 0 {
			among, err := readyAmong(ctx, q, kinds, stamp, only, n)
			if err != nil || len(among) == 0 {
				return err
			}
			raw, err := json.Marshal(among)
			if err != nil {
				return err
			}
			query, args = amongQuery, append(args, string(raw))
		}
		args = append(args, n)
		jobs, err := engine.QueryAll(ctx, q, ScanJob, query, args...)
		if err != nil {
			return err
		}
		for _, j := range jobs {
			c := Claim{Job: j, BackupID: uuid.NewString(), StartedAt: now}
			trigger := j.Trigger
			if j.Attempt > 1 {
				trigger = TriggerRetry
			}
			if err := insertAttempt(ctx, q, c.BackupID, j.DeviceID, now, trigger); err != nil {
				return err
			}
			if _, err := q.ExecContext(ctx, claimBackupQuery, c.BackupID, j.ID); err != nil {
				return err
			}
			c.Job.BackupID = &c.BackupID
			claims = append(claims, c)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim jobs: %w", err)
	}
	return claims, nil
}

// readyAmong picks the first n ready jobs in claim order that are in
// only (sorted). It walks the ready queue rather than handing SQLite the
// whole list: a fleet-wide `backup run` claims thousands of times from a
// list of thousands of jobs, almost all of them at the head of the
// queue. A queue mostly of other jobs stops the walk after as many rows
// as only has; then it returns only itself and the claim filters the
// whole list in SQL, as before.
func readyAmong(ctx context.Context, q engine.Querier, kinds, now string, only []int64, n int) ([]int64, error) {
	budget := len(only) + n
	rows, err := q.QueryContext(ctx, readyQueueQuery(kinds), now, budget)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	picked := []int64{}
	walked := 0
	for rows.Next() {
		walked++
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		if _, ok := slices.BinarySearch(only, id); ok {
			if picked = append(picked, id); len(picked) == n {
				return picked, nil
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if walked == budget {
		return only, nil // the walk gave up: let SQL filter
	}
	return picked, nil // the whole ready queue was walked
}

// insertAttempt writes the backups row of an attempt that starts: it
// shows the attempt running until the attempt ends.
func insertAttempt(ctx context.Context, q engine.Querier, backupID string, deviceID int64, at time.Time, trigger string) error {
	if _, err := q.ExecContext(ctx, insertAttemptQuery, backupID, deviceID, backupTime(at), false, trigger, false, false); err != nil {
		return fmt.Errorf("insert backup: %w", err)
	}
	return nil
}
