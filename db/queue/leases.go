package queue

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"backupd/db/engine"

	"github.com/google/uuid"
)

// A remote collector's jobs are leases: claimed for it by the server
// (LeaseJobs), kept while it reports them in hand (ExtendLeases), and
// queued again when it stops reporting one (ReleaseLeases: it restarted,
// or lost the job's answer) or stops calling at all (ExpireLeases). Each
// lease has its own owner name, so that ending one is InterruptJobs of
// that owner: the attempt fails as interrupted, the job is ready again at
// once with its attempt given back, and a job interrupted too often
// fails, exactly as a job of an engine that died.

// leaseOwnerPrefix starts the owner name of every lease.
const leaseOwnerPrefix = "collector:"

func leaseOwner(collectorID int64) string {
	return leaseOwnerPrefix + strconv.FormatInt(collectorID, 10) + ":" + uuid.NewString()
}

// LeaseJobs leases up to n ready backup jobs of zone zoneID to
// collector collectorID until until, each with a fresh backups row that
// shows it running. A collector only backs devices up: restore and push
// jobs are never leased.
func (jq *Queue) LeaseJobs(ctx context.Context, collectorID, zoneID int64, n int, until time.Time) ([]Claim, error) {
	if n <= 0 {
		return nil, nil
	}
	now := time.Now().UTC()
	stamp := backupTime(now)
	pick := `SELECT id FROM jobs WHERE state = 'queued' AND zone_id = ? AND not_before <= ? AND kind = 'backup'
		ORDER BY not_before, id LIMIT ?` + jq.d.SkipLocked()
	var claims []Claim
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		claims = claims[:0]
		ids, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (int64, error) {
			var id int64
			return id, r.Scan(&id)
		}, pick, zoneID, stamp, n)
		if err != nil {
			return err
		}
		for _, id := range ids {
			j, err := ScanJob(tx.QueryRowContext(ctx, `UPDATE jobs SET state = 'running', owner = ?, started_at = ?,
					attempt = attempt + 1, finished_at = NULL, error = NULL, error_reason = NULL, collector_id = ?, lease_until = ?
				WHERE id = ? AND state = 'queued' RETURNING `+Columns,
				leaseOwner(collectorID), stamp, collectorID, backupTime(until), id))
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			cl := Claim{Job: j, BackupID: uuid.NewString(), StartedAt: now}
			trigger := j.Trigger
			if j.Attempt > 1 {
				trigger = TriggerRetry
			}
			if err := insertAttempt(ctx, tx, cl.BackupID, j.DeviceID, now, trigger); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, claimBackupQuery, cl.BackupID, j.ID); err != nil {
				return err
			}
			cl.Job.BackupID = &cl.BackupID
			claims = append(claims, cl)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("lease jobs: %w", err)
	}
	return claims, nil
}

// ZoneJobsDue reports whether a backup job of the zone waits in the
// queue ready by now (what LeaseJobs would lease): a reader's cheap look, so that a collector's idle long poll
// opens a write transaction (LeaseJobs) only when there is work to take.
func (jq *Queue) ZoneJobsDue(ctx context.Context, zoneID int64, now time.Time) (bool, error) {
	var due bool
	if err := jq.e.Reader.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM jobs
		WHERE state = 'queued' AND zone_id = ? AND not_before <= ? AND kind = 'backup')`, zoneID, backupTime(now)).Scan(&due); err != nil {
		return false, fmt.Errorf("zone jobs due: %w", err)
	}
	return due, nil
}

// ErrLeaseLost is a collector's result or report for a job it no longer
// holds: its lease ended (the job was queued again, perhaps run since)
// or the job ended otherwise.
var ErrLeaseLost = errors.New("the job is no longer leased to this collector")

// LeasedClaim returns the claim of the attempt (backupID) the collector
// holds on job jobID, or ErrLeaseLost.
func (jq *Queue) LeasedClaim(ctx context.Context, collectorID, jobID int64, backupID string) (Claim, error) {
	var cl Claim
	var collector sql.NullInt64
	row := jq.e.Writer.QueryRowContext(ctx, `SELECT `+Columns+`, collector_id FROM jobs WHERE id = ?`, jobID)
	j, err := ScanJob(suffixScanner{row, &collector})
	if errors.Is(err, sql.ErrNoRows) {
		return cl, ErrLeaseLost
	}
	if err != nil {
		return cl, fmt.Errorf("leased job %d: %w", jobID, err)
	}
	if j.State != JobRunning || !collector.Valid || collector.Int64 != collectorID || j.BackupID == nil ||
		*j.BackupID != backupID || j.StartedAt == nil || j.Owner == nil {
		return cl, ErrLeaseLost
	}
	return Claim{Job: j, BackupID: backupID, StartedAt: *j.StartedAt}, nil
}

// suffixScanner scans the leading columns into the caller's targets,
// then the trailing one into last.
type suffixScanner struct {
	r    engine.Scanner
	last any
}

func (p suffixScanner) Scan(dest ...any) error { return p.r.Scan(append(dest, p.last)...) }

// LeaseReport is what ExtendLeases tells a collector of the jobs it
// reported in hand.
type LeaseReport struct {
	// Cancel lists those an operator asked to stop.
	Cancel []int64
	// Lost lists those it no longer holds: it should drop them.
	Lost []int64
}

// ExtendLeases extends until until the leases of the jobs the collector
// reports in hand, and reports which of them to cancel or drop.
func (jq *Queue) ExtendLeases(ctx context.Context, collectorID int64, held []int64, until time.Time) (LeaseReport, error) {
	var rep LeaseReport
	if len(held) == 0 {
		return rep, nil
	}
	raw, err := json.Marshal(held)
	if err != nil {
		return rep, err
	}
	err = jq.e.InTx(ctx, func(tx *sql.Tx) error {
		rep = LeaseReport{}
		rows, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) ([2]int64, error) {
			var v [2]int64
			return v, r.Scan(&v[0], &v[1])
		}, `UPDATE jobs SET lease_until = ?
			WHERE state = 'running' AND collector_id = ? AND id IN (SELECT CAST(value AS BIGINT) FROM `+jq.d.JSONEach()+`)
			RETURNING id, cancel_requested`, backupTime(until), collectorID, string(raw))
		if err != nil {
			return err
		}
		kept := map[int64]bool{}
		for _, r := range rows {
			kept[r[0]] = true
			if r[1] != 0 {
				rep.Cancel = append(rep.Cancel, r[0])
			}
		}
		for _, id := range held {
			if !kept[id] {
				rep.Lost = append(rep.Lost, id)
			}
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("extend leases: %w", err)
	}
	return rep, nil
}

// LeaseCancels lists the jobs leased to the collector that an operator
// asked to stop.
func (jq *Queue) LeaseCancels(ctx context.Context, collectorID int64) ([]int64, error) {
	ids, err := engine.QueryAll(ctx, jq.e.Reader, func(r engine.Scanner) (int64, error) {
		var id int64
		return id, r.Scan(&id)
	}, `SELECT id FROM jobs WHERE state = 'running' AND collector_id = ? AND cancel_requested = 1 ORDER BY id`, collectorID)
	if err != nil {
		return nil, fmt.Errorf("lease cancels: %w", err)
	}
	return ids, nil
}

// ReleaseLeases queues again, as interrupted, the jobs leased to the
// collector that are not in keep: it no longer has them in hand (it
// restarted, or never received them). It returns how many it released.
func (jq *Queue) ReleaseLeases(ctx context.Context, collectorID int64, keep []int64, maxInterruptions int) (int, error) {
	raw, err := json.Marshal(append([]int64{}, keep...))
	if err != nil {
		return 0, err
	}
	owners, err := engine.QueryAll(ctx, jq.e.Writer, scanString, `SELECT owner FROM jobs
		WHERE state = 'running' AND collector_id = ? AND owner IS NOT NULL
			AND id NOT IN (SELECT CAST(value AS BIGINT) FROM `+jq.d.JSONEach()+`)`, collectorID, string(raw))
	if err != nil {
		return 0, fmt.Errorf("release leases: %w", err)
	}
	return jq.interruptLeases(ctx, owners, maxInterruptions)
}

// ExpireLeases queues again, as interrupted, every job whose lease ran
// out before now: its collector stopped calling. It returns how many it
// released.
func (jq *Queue) ExpireLeases(ctx context.Context, now time.Time, maxInterruptions int) (int, error) {
	owners, err := jq.expiredLeaseOwners(ctx, now)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, owner := range owners {
		if !strings.HasPrefix(owner, leaseOwnerPrefix) {
			continue
		}
		res, err := jq.expireLease(ctx, owner, now, maxInterruptions)
		if err != nil {
			return n, err
		}
		n += res.Attempts
	}
	return n, nil
}

// expiredLeaseOwners lists the owners of the leases that ran out before
// now. A collector may renew one before expireLease gets to it.
func (jq *Queue) expiredLeaseOwners(ctx context.Context, now time.Time) ([]string, error) {
	owners, err := engine.QueryAll(ctx, jq.e.Writer, scanString, `SELECT owner FROM jobs
		WHERE state = 'running' AND collector_id IS NOT NULL AND lease_until < ? AND owner IS NOT NULL`, backupTime(now))
	if err != nil {
		return nil, fmt.Errorf("expire leases: %w", err)
	}
	return owners, nil
}

// expireLease interrupts owner's lease if it still ran out before now.
// The first statement re-checks that in the transaction that ends it and
// locks the job's row (PostgreSQL re-evaluates the condition on a row a
// concurrent renewal changed): a collector that renewed the lease since
// expiredLeaseOwners keeps its job, and a renewal that comes after finds
// the job no longer running and drops it.
func (jq *Queue) expireLease(ctx context.Context, owner string, now time.Time, maxInterruptions int) (Interrupted, error) {
	var out Interrupted
	err := jq.e.InTx(ctx, func(tx *sql.Tx) error {
		out = Interrupted{}
		ids, err := engine.QueryAll(ctx, tx, func(r engine.Scanner) (int64, error) {
			var id int64
			return id, r.Scan(&id)
		}, `UPDATE jobs SET owner = owner
			WHERE state = 'running' AND owner = ? AND collector_id IS NOT NULL AND lease_until < ?
			RETURNING id`, owner, backupTime(now))
		if err != nil || len(ids) == 0 {
			return err
		}
		return jq.interruptJobs(ctx, tx, owner, 0, maxInterruptions, &out)
	})
	if err != nil {
		return Interrupted{}, fmt.Errorf("expire the lease %s: %w", owner, err)
	}
	return out, nil
}

func (jq *Queue) interruptLeases(ctx context.Context, owners []string, maxInterruptions int) (int, error) {
	n := 0
	for _, owner := range owners {
		if !strings.HasPrefix(owner, leaseOwnerPrefix) {
			continue
		}
		res, err := jq.InterruptJobs(ctx, owner, maxInterruptions)
		if err != nil {
			return n, err
		}
		n += res.Attempts
	}
	return n, nil
}

func scanString(r engine.Scanner) (string, error) {
	var v string
	return v, r.Scan(&v)
}
