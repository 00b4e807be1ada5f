package db

import (
	"context"
	"database/sql"
)

// readQueries are the reads every backup makes (its device, credential,
// host key and previous version, and the job it reports), prepared on
// the read pool when the store opens: parsing them again for each of
// thousands of devices costs as much as running them.
func readQueries(d dialect) []string {
	return []string{getDeviceQuery, getCredentialQuery, hostKeysQuery, latestGoodSnapshotQuery, getJobsQuery(1),
		jobStatesQuery(d)}
}

// prepareAll prepares queries on db; a query that fails to prepare simply
// runs unprepared (and fails there, with its error, if it is wrong).
func prepareAll(db *sql.DB, queries []string) map[string]*sql.Stmt {
	out := map[string]*sql.Stmt{}
	for _, q := range queries {
		if st, err := db.Prepare(q); err == nil {
			out[q] = st
		}
	}
	return out
}

// preparedDB runs queries on a pool, on the store's prepared statement
// when the query is one of them.
type preparedDB struct {
	db    *sql.DB
	stmts map[string]*sql.Stmt
}

// read is the read pool, with readQueries prepared.
func (s *Store) read() querier { return preparedDB{s.reader, s.reads} }

func (p preparedDB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.stmts[query]; st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.db.QueryContext(ctx, query, args...)
}

func (p preparedDB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.stmts[query]; st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.db.QueryRowContext(ctx, query, args...)
}

func (p preparedDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.stmts[query]; st != nil {
		return st.ExecContext(ctx, args...)
	}
	return p.db.ExecContext(ctx, query, args...)
}
