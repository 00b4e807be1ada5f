package queue

import (
	"context"
	"database/sql"
	"time"

	"backupd/db/engine"
)

// Statements is how many of its frequent statements the queue prepared,
// of how many, and the error preparing each of the others gives now.
func (jq *Queue) Statements() (prepared, of int, failed map[string]error) {
	failed = map[string]error{}
	check := func(db *sql.DB, have map[string]*sql.Stmt, queries []string) {
		for _, q := range queries {
			of++
			if have[q] != nil {
				prepared++
				continue
			}
			st, err := db.Prepare(q)
			if err == nil {
				st.Close()
			}
			failed[q] = err
		}
	}
	check(jq.e.Writer, jq.stmts, writeQueries(jq.d))
	check(jq.e.Reader, jq.reads, readQueries(jq.d))
	return prepared, of, failed
}

// ExpiredLeaseOwners and ExpireLease are ExpireLeases's two steps, for a
// test that renews a lease between them.
func (jq *Queue) ExpiredLeaseOwners(ctx context.Context, now time.Time) ([]string, error) {
	return jq.expiredLeaseOwners(ctx, now)
}

func (jq *Queue) ExpireLease(ctx context.Context, owner string, now time.Time, maxInterruptions int) (Interrupted, error) {
	return jq.expireLease(ctx, owner, now, maxInterruptions)
}

// ActiveJobsQuery is ActiveJobs's statement, for its plan test.
func ActiveJobsQuery(pg bool) string { return activeJobsQuery(engine.DialectOf(pg)) }
