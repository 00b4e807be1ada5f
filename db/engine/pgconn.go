package engine

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lib/pq"
)

// A PostgreSQL server that stops answering must not hold a caller for
// ever. Three bounds see to it, whatever the caller does:
//
//   - The socket: TCP keepalives and TCP_USER_TIMEOUT on both ends
//     (pgWireDefaults, pgDialer), so that a connection whose packets are
//     lost (a cut network, a vanished host) fails within tens of seconds
//     rather than the kernel's quarter of an hour, and PostgreSQL drops
//     the session (and its locks) of a client it no longer hears from.
//   - Connecting: connect_timeout bounds the dial and the start-up
//     exchange (a server that accepts and then says nothing).
//   - Each call: when the caller's context ends, the connection's socket
//     is cut (pgConn.bound). lib/pq on its own only asks the server to
//     cancel the statement and goes on waiting for its answer, so that a
//     server that answers nothing (stopped, hung, or a middlebox that
//     holds the connection) would hold the call, and the single writer
//     connection with it, for as long as it stays silent. A connection
//     cut so is discarded by the pool.

// pgWireDefaults are run-time parameters every connection to PostgreSQL
// gets unless its URL sets them: the server side of the keepalives (see
// LockServerBound) and the connect timeout, in seconds.
var pgWireDefaults = map[string]string{
	"connect_timeout":         "10",
	"tcp_keepalives_idle":     "5",
	"tcp_keepalives_interval": "2",
	"tcp_keepalives_count":    "3",
	"tcp_user_timeout":        "10000",
}

// pgUserTimeout is the client side's TCP_USER_TIMEOUT: how long sent data
// may go unacknowledged before the kernel gives the connection up.
const pgUserTimeout = 20 * time.Second

// pgDialer dials PostgreSQL with keepalives and TCP_USER_TIMEOUT (lib/pq
// reads none of libpq's keepalives settings), and remembers the socket
// of the connection it opens, which pgConn cuts when a caller gives up.
type pgDialer struct {
	d      net.Dialer
	mu     sync.Mutex
	conn   net.Conn
	opened bool
	// cut is set when the context of the open ended: the socket, and any
	// dialled after, fails at once.
	cut bool
}

func newPGDialer() *pgDialer {
	return &pgDialer{d: net.Dialer{
		Timeout:         10 * time.Second,
		KeepAliveConfig: net.KeepAliveConfig{Enable: true, Idle: 5 * time.Second, Interval: 2 * time.Second, Count: 3},
		Control:         pgSocketControl,
	}}
}

func (p *pgDialer) Dial(network, address string) (net.Conn, error) {
	return p.DialContext(context.Background(), network, address)
}

func (p *pgDialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return p.DialContext(ctx, network, address)
}

func (p *pgDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	c, err := p.d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// lib/pq dials again for a fallback (sslmode=prefer) while it opens,
	// and afterwards for its cancel requests, which are not the
	// connection's socket.
	if p.opened {
		return newCappedConn(c, time.Now().Add(pgCancelTimeout)), nil
	}
	p.conn = c
	if p.cut {
		_ = c.SetDeadline(time.Unix(1, 0))
	}
	return c, nil
}

// pgCancelTimeout bounds a cancel request (a connection of its own that
// asks the server to stop a statement whose caller gave up): lib/pq lets
// one wait for its connect_timeout, and a server that does not answer
// would not answer it either.
const pgCancelTimeout = 3 * time.Second

// cappedConn is a socket whose deadlines never pass limit, whatever its
// user sets.
type cappedConn struct {
	net.Conn
	limit time.Time
}

func newCappedConn(c net.Conn, limit time.Time) *cappedConn {
	_ = c.SetDeadline(limit)
	return &cappedConn{Conn: c, limit: limit}
}

func (c *cappedConn) capped(t time.Time) time.Time {
	if t.IsZero() || t.After(c.limit) {
		return c.limit
	}
	return t
}

func (c *cappedConn) SetDeadline(t time.Time) error { return c.Conn.SetDeadline(c.capped(t)) }

func (c *cappedConn) SetReadDeadline(t time.Time) error { return c.Conn.SetReadDeadline(c.capped(t)) }

func (c *cappedConn) SetWriteDeadline(t time.Time) error { return c.Conn.SetWriteDeadline(c.capped(t)) }

// cutOpen cuts the socket of the connection being opened.
func (p *pgDialer) cutOpen() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.opened {
		return
	}
	p.cut = true
	if p.conn != nil {
		_ = p.conn.SetDeadline(time.Unix(1, 0))
	}
}

// socket is the opened connection's socket (the dials after it are not),
// and whether the open was cut.
func (p *pgDialer) socket() (net.Conn, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opened = true
	return p.conn, p.cut
}

// pgConnector opens pgConns; sql.Open of PostgresDriver uses it, so that
// the pool's context reaches the dial. Its connections number the ?
// placeholders of their queries when numbered is set, and run them as
// they are otherwise (the migrations, which have none).
type pgConnector struct {
	dsn      string
	numbered bool
}

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	return openPGConn(ctx, c.dsn, c.numbered)
}

func (c pgConnector) Driver() driver.Driver { return pgDriver{} }

// openPGConn opens a connection, bound to ctx as a call is: lib/pq
// bounds the start-up exchange by connect_timeout only.
func openPGConn(ctx context.Context, dsn string, numbered bool) (driver.Conn, error) {
	connector, err := pq.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	d := newPGDialer()
	connector.Dialer(d)
	stop := context.AfterFunc(ctx, d.cutOpen)
	c, err := connector.Connect(ctx)
	stop()
	socket, cut := d.socket()
	if cut {
		if err == nil {
			_ = c.Close()
			err = errors.New("the connection was cut")
		}
		return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	if err != nil {
		return nil, err
	}
	return &pgConn{Conn: c, socket: socket, numbered: numbered}, nil
}

// pgConn is a lib/pq connection whose queries have their ? placeholders
// numbered (pgRebind) when numbered is set, whose arguments are converted
// the way modernc.org/sqlite converts them, and whose calls end when their
// context does (bound).
type pgConn struct {
	driver.Conn
	socket   net.Conn
	numbered bool
	// cut is set once the socket was cut: the connection is useless.
	cut atomic.Bool
}

// pgStatementHook, when set (SetStatementHook), sees
// every statement a numbering connection sends, as sent.
var pgStatementHook func(query string)

// text is query as the connection sends it.
func (c *pgConn) text(query string) string {
	if !c.numbered {
		return query
	}
	query = pgRebindCached(query)
	if hook := pgStatementHook; hook != nil {
		hook(query)
	}
	return query
}

// bound cuts the connection's socket should ctx end before release is
// called: every read and write on it fails at once, so that the call
// returns (with an error) however silent the server is. release waits for
// a cut under way, so that the connection is marked cut before the pool
// sees it again.
func (c *pgConn) bound(ctx context.Context) (release func()) {
	if ctx.Done() == nil || c.socket == nil {
		return func() {}
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		c.cut.Store(true)
		_ = c.socket.SetDeadline(time.Unix(1, 0))
	})
	return func() {
		if !stop() {
			<-fired
		}
	}
}

// failed is err, said to be ctx's end when that is what cut the call.
func (c *pgConn) failed(ctx context.Context, err error) error {
	if err == nil || !c.cut.Load() || ctx.Err() == nil {
		return err
	}
	return fmt.Errorf("%w: %w", ctx.Err(), err)
}

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	st, err := c.Conn.Prepare(c.text(query))
	if err != nil {
		return nil, err
	}
	return &pgStmt{Stmt: st, c: c}, nil
}

func (c *pgConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	release := c.bound(ctx)
	defer release()
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, c.text(query))
	if err != nil {
		return nil, c.failed(ctx, err)
	}
	return &pgStmt{Stmt: st, c: c}, nil
}

// BeginTx gives a read-only transaction one snapshot of the database for
// all its statements, as a SQLite read transaction has: reads that walk a
// delta chain or page through a list must not see a commit of another
// node half-way (PostgreSQL's default, READ COMMITTED, would show it).
// The transaction is bound to ctx until it commits or rolls back: a
// rollback that database/sql starts when ctx ends must not wait on a
// silent server either.
func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.ReadOnly && opts.Isolation == driver.IsolationLevel(sql.LevelDefault) {
		opts.Isolation = driver.IsolationLevel(sql.LevelRepeatableRead)
	}
	release := c.bound(ctx)
	tx, err := c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		release()
		return nil, c.failed(ctx, err)
	}
	return &pgTx{Tx: tx, release: release}, nil
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	release := c.bound(ctx)
	rows, err := c.Conn.(driver.QueryerContext).QueryContext(ctx, c.text(query), args)
	if err != nil {
		release()
		return nil, c.failed(ctx, err)
	}
	return &pgRows{Rows: rows, ctx: ctx, c: c, release: release}, nil
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	release := c.bound(ctx)
	defer release()
	res, err := c.Conn.(driver.ExecerContext).ExecContext(ctx, c.text(query), args)
	return res, c.failed(ctx, err)
}

func (c *pgConn) Ping(ctx context.Context) error {
	release := c.bound(ctx)
	defer release()
	return c.failed(ctx, c.Conn.(driver.Pinger).Ping(ctx))
}

func (c *pgConn) ResetSession(ctx context.Context) error {
	if c.cut.Load() {
		return driver.ErrBadConn
	}
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *pgConn) IsValid() bool {
	if c.cut.Load() {
		return false
	}
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// CheckNamedValue stores Go booleans as 1 and 0: every flag column is an
// integer on both engines, as SQLite has no other kind.
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if b, ok := nv.Value.(bool); ok {
		if b {
			nv.Value = int64(1)
		} else {
			nv.Value = int64(0)
		}
		return nil
	}
	v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
	if err != nil {
		return err
	}
	nv.Value = v
	return nil
}

// pgStmt is a prepared statement of a pgConn, its calls bound as the
// connection's are.
type pgStmt struct {
	driver.Stmt
	c *pgConn
}

// The statement's calls get ctx without its end: lib/pq would send a
// cancel request when it ends and, for a statement, hold the call until
// that request is answered; the bound cuts the call at once instead (the
// statements the store prepares are short reads and writes, whose cancel
// request is of no use).

func (s *pgStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	release := s.c.bound(ctx)
	defer release()
	res, err := s.Stmt.(driver.StmtExecContext).ExecContext(context.WithoutCancel(ctx), args)
	return res, s.c.failed(ctx, err)
}

func (s *pgStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	release := s.c.bound(ctx)
	rows, err := s.Stmt.(driver.StmtQueryContext).QueryContext(context.WithoutCancel(ctx), args)
	if err != nil {
		release()
		return nil, s.c.failed(ctx, err)
	}
	return &pgRows{Rows: rows, ctx: ctx, c: s.c, release: release}, nil
}

// pgRows keeps its query's bound until it is closed: lib/pq reads the
// rows as they are asked for.
type pgRows struct {
	driver.Rows
	ctx     context.Context
	c       *pgConn
	release func()
	once    sync.Once
}

func (r *pgRows) Next(dest []driver.Value) error {
	err := r.Rows.Next(dest)
	if err == io.EOF {
		return err
	}
	return r.c.failed(r.ctx, err)
}

func (r *pgRows) Close() error {
	err := r.Rows.Close()
	r.once.Do(r.release)
	return r.c.failed(r.ctx, err)
}

func (r *pgRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

func (r *pgRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

// pgTx keeps its transaction's bound until it ends.
type pgTx struct {
	driver.Tx
	release func()
	once    sync.Once
}

func (t *pgTx) Commit() error {
	err := t.Tx.Commit()
	t.once.Do(t.release)
	return err
}

func (t *pgTx) Rollback() error {
	err := t.Tx.Rollback()
	t.once.Do(t.release)
	return err
}

// SetStatementHook has fn see every statement a numbering connection
// sends PostgreSQL, as sent. It is for tests, which set it before any
// store opens.
func SetStatementHook(fn func(query string)) { pgStatementHook = fn }
