package engine

import (
	"context"
	"database/sql"
)

// PrepareAll prepares queries on db; a query that fails to prepare simply
// runs unprepared (and fails there, with its error, if it is wrong).
func PrepareAll(db *sql.DB, queries []string) map[string]*sql.Stmt {
	out := map[string]*sql.Stmt{}
	for _, q := range queries {
		if st, err := db.Prepare(q); err == nil {
			out[q] = st
		}
	}
	return out
}

// Prepared runs queries on a pool, on a prepared statement when the
// query is one of Stmts (PrepareAll's).
type Prepared struct {
	DB    *sql.DB
	Stmts map[string]*sql.Stmt
}

func (p Prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.Stmts[query]; st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.DB.QueryContext(ctx, query, args...)
}

func (p Prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.Stmts[query]; st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.DB.QueryRowContext(ctx, query, args...)
}

func (p Prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.Stmts[query]; st != nil {
		return st.ExecContext(ctx, args...)
	}
	return p.DB.ExecContext(ctx, query, args...)
}

// PreparedTx runs a transaction's queries, on the pool's prepared
// statement (bound to the transaction) when the query is one of Stmts.
type PreparedTx struct {
	Tx    *sql.Tx
	Stmts map[string]*sql.Stmt
}

func (p PreparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.Stmts[query]; st != nil {
		return p.Tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return p.Tx.QueryContext(ctx, query, args...)
}

func (p PreparedTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.Stmts[query]; st != nil {
		return p.Tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return p.Tx.QueryRowContext(ctx, query, args...)
}

func (p PreparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := p.Stmts[query]; st != nil {
		return p.Tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return p.Tx.ExecContext(ctx, query, args...)
}
