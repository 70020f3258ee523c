package store

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/lib/pq"
)

// stmtCacheSize bounds the statements each PostgreSQL connection keeps
// prepared. The service's hot paths use a few dozen shapes; the rest (IN
// lists and bulk inserts of other lengths) come and go.
const stmtCacheSize = 128

// cachingConnector gives every PostgreSQL connection a cache of prepared
// statements. Without it lib/pq sends each parameterised statement as an
// unnamed Parse/Describe/Sync, waits, then Bind/Execute/Sync and waits
// again: two round trips, and a fresh plan every time. With it the first
// use prepares a named statement and every later one is a single
// Bind/Execute/Sync round trip on a cached plan.
//
// It needs session-level connections (not a transaction-pooling proxy in
// between): prepared statements belong to the server session.
type cachingConnector struct {
	driver.Connector
	tr *tracer
}

func (c cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, nc, err := connect(ctx, c.Connector.Connect)
	if err != nil {
		return nil, connectFailed{err}
	}
	return newCachingConn(conn, nc, c.tr), nil
}

// connectFailed marks an error from opening a PostgreSQL session: whatever
// the server answered (the database dropped or not accepting connections,
// in any language) or the network did, the database cannot be used now.
// Unwrap keeps database/sql's driver.ErrBadConn check and the cause's own
// checks working.
type connectFailed struct{ err error }

func (e connectFailed) Error() string { return e.err.Error() }
func (e connectFailed) Unwrap() error { return e.err }

// ConnectFailed marks err as a failure to open a PostgreSQL session, as
// this package's connector does, for a connection opened elsewhere (the
// event listener's): Classify then answers UNAVAILABLE for it.
func ConnectFailed(err error) error { return connectFailed{err} }

// Unprepared marks a statement to be sent unnamed, planned afresh with its
// parameters' values at every use (two round trips), instead of prepared
// once: for a statement whose best plan depends on its values or on how
// big its tables have grown, which a cached generic plan would fix at the
// first uses' sizes. Put it at the start of the statement's text.
const Unprepared = "/* unprepared */ "

// PGTime writes t as lib/pq writes a time parameter, for a text array
// element the statement casts to timestamptz[].
func PGTime(t time.Time) string { return string(pq.FormatTimestamp(t)) }

// The wrapped conn must offer what lib/pq's does; database/sql uses one
// connection from one goroutine at a time, so the cache needs no lock.
type pqConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

type cachingConn struct {
	pqConn
	lru   *list.List // of *cachedStmt, most recently used first
	stmts map[string]*list.Element
	// nc is the network connection (nil if the dialer did not give it);
	// w watches what runs on it (stall.go).
	nc net.Conn
	w  *watch
	// tr makes each statement's span (trace.go).
	tr *tracer
	// readOnly is set once the server refused a write (readonly.go): the
	// connection is then closed instead of pooled.
	readOnly bool
}

type cachedStmt struct {
	query string
	stmt  driver.Stmt
}

func newCachingConn(c driver.Conn, nc net.Conn, tr *tracer) driver.Conn {
	pc, ok := c.(pqConn)
	if !ok {
		return c // not the driver this was written for: no cache
	}
	return &cachingConn{pqConn: pc, lru: list.New(), stmts: map[string]*list.Element{}, nc: nc, tr: tr}
}

// prepared returns query's statement, preparing it on first use.
func (c *cachingConn) prepared(ctx context.Context, query string) (driver.Stmt, error) {
	if e, ok := c.stmts[query]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*cachedStmt).stmt, nil
	}
	st, err := c.pqConn.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.stmts[query] = c.lru.PushFront(&cachedStmt{query: query, stmt: st})
	if c.lru.Len() > stmtCacheSize {
		old := c.lru.Back()
		c.lru.Remove(old)
		cs := old.Value.(*cachedStmt)
		delete(c.stmts, cs.query)
		if err := cs.stmt.Close(); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// forget drops query's statement after an error that says the server no
// longer has it as prepared (a DEALLOCATE, or a plan invalidated by a
// change of result type); the next use prepares it again.
func (c *cachingConn) forget(query string, err error) {
	var pqErr *pq.Error
	if !errors.As(err, &pqErr) || (pqErr.Code != "26000" && pqErr.Code != "0A000") {
		return
	}
	if e, ok := c.stmts[query]; ok {
		c.lru.Remove(e)
		delete(c.stmts, query)
	}
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (rows driver.Rows, err error) {
	ctx, end := c.tr.statement(ctx, query)
	defer func() { end(err) }()
	c.watchCtx(ctx) // until the next use: the rows are read after this returns
	if len(args) == 0 || strings.HasPrefix(query, Unprepared) {
		// The simple protocol is already one round trip.
		rows, err := c.pqConn.QueryContext(ctx, query, args)
		c.noteReadOnly(err)
		return rows, err
	}
	st, err := c.prepared(ctx, query)
	if err != nil {
		c.noteReadOnly(err)
		return nil, err
	}
	rows, err = st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		c.forget(query, err)
		c.noteReadOnly(err)
	}
	return rows, err
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (res driver.Result, err error) {
	ctx, end := c.tr.statement(ctx, query)
	defer func() { end(err) }()
	c.watchCtx(ctx)
	if len(args) == 0 || strings.HasPrefix(query, Unprepared) {
		res, err := c.pqConn.ExecContext(ctx, query, args)
		c.noteReadOnly(err)
		return res, err
	}
	st, err := c.prepared(ctx, query)
	if err != nil {
		c.noteReadOnly(err)
		return nil, err
	}
	res, err = st.(driver.StmtExecContext).ExecContext(ctx, args)
	if err != nil {
		c.forget(query, err)
		c.noteReadOnly(err)
	}
	return res, err
}
