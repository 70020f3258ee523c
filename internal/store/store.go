// Package store opens the database (embedded SQLite or PostgreSQL), migrates
// it, and runs operations in one database transaction handed to them as an
// argument (Within), so that an idempotency record, a state change, ledger
// postings and outbox events commit together or not at all. Reads outside a
// transaction name the read client (Reader).
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"
	"modernc.org/sqlite" // also registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"merchantpay/ent"
	_ "merchantpay/ent/runtime" // tenant hooks and interceptors
	"merchantpay/internal/apperr"
)

// DB is the service's database.
type DB struct {
	Dialect string
	// write runs transactions. On SQLite it is the one writer connection.
	write *ent.Client
	// read serves reads made outside a transaction.
	read       *ent.Client
	sqlW, sqlR *sql.DB
	url        string
	// tr makes the spans of transactions and statements (trace.go).
	tr *tracer
}

// Open connects to rawURL: "postgres://..." or "sqlite:PATH", with the
// default Options.
func Open(ctx context.Context, rawURL string) (*DB, error) {
	return OpenWith(ctx, rawURL, Options{})
}

// OpenWith is Open with the pool and statement settings of opt.
func OpenWith(ctx context.Context, rawURL string, opt Options) (*DB, error) {
	switch {
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		return openPostgres(ctx, rawURL, opt)
	case strings.HasPrefix(rawURL, "sqlite:"):
		// opt does not apply: see Options.
		return openSQLite(ctx, strings.TrimPrefix(rawURL, "sqlite:"))
	default:
		return nil, fmt.Errorf("store: DATABASE_URL must start with postgres:// or sqlite: (got %q)", redact(rawURL))
	}
}

func openPostgres(ctx context.Context, rawURL string, opt Options) (*DB, error) {
	connector, err := pq.NewConnector(withStatementTimeout(withConnectTimeout(rawURL), opt.StatementTimeout))
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	connector.Dialer(dialer{})
	tr := newTracer("postgresql")
	db := sql.OpenDB(cachingConnector{Connector: connector, tr: tr})
	db.SetMaxOpenConns(opt.maxConns())
	db.SetMaxIdleConns(opt.maxConns())
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: connect postgres %s: %w", redact(rawURL), err)
	}
	c := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	return &DB{Dialect: dialect.Postgres, write: c, read: c, sqlW: db, sqlR: db, url: rawURL, tr: tr}, nil
}

func openSQLite(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("store: sqlite: needs a file path")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("store: sqlite: %w", err)
		}
	}
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(30000)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_time_format", "sqlite")
	q.Set("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	// One writer: SQLite serialises writes anyway, and a single connection
	// turns lock contention into an orderly queue instead of SQLITE_BUSY.
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("store: sqlite %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("store: open sqlite: %w", err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	return &DB{
		Dialect: dialect.SQLite,
		write:   ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, w))),
		read:    ent.NewClient(ent.Driver(entsql.OpenDB(dialect.SQLite, r))),
		sqlW:    w, sqlR: r, url: "sqlite:" + path,
		tr: newTracer("sqlite"),
	}, nil
}

// IsPostgres reports whether row locks (FOR UPDATE, SKIP LOCKED) are available.
func (db *DB) IsPostgres() bool { return db.Dialect == dialect.Postgres }

// Close closes the connections.
func (db *DB) Close() error {
	err := db.sqlW.Close()
	if db.sqlR != db.sqlW {
		err = errors.Join(err, db.sqlR.Close())
	}
	return err
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error { return db.sqlR.PingContext(ctx) }

// SQL is the raw writer pool, for the few statements ent cannot express.
func (db *DB) SQL() *sql.DB { return db.sqlW }

// Reader is the client for reads that run in no transaction.
func (db *DB) Reader() *ent.Client { return db.read }

// ClientOf is tx's client, or the reader when tx is nil: for a read that
// runs in the caller's transaction when it has one.
func (db *DB) ClientOf(tx *ent.Tx) *ent.Client {
	if tx != nil {
		return tx.Client()
	}
	return db.read
}

// Within runs fn in tx, the transaction the caller was handed; when tx is
// nil it begins one, runs fn in it and commits it when fn returns nil (and
// rolls it back otherwise). fn's context does not carry the transaction:
// fn passes tx on as an argument to whatever writes in it.
//
// A transaction Within began and rolls back for fn's error (or panic) is
// marked failed in its trace, unless that error is ErrRollback: a rollback
// fn chose (a refusal it answered) is no failure.
func (db *DB) Within(ctx context.Context, tx *ent.Tx, fn func(ctx context.Context, tx *ent.Tx) error) error {
	if tx != nil {
		return fn(ctx, tx)
	}
	ctx, tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	if err := db.runGuarded(ctx, tx, fn); err != nil {
		if !errors.Is(err, ErrRollback) {
			db.tr.failed(ctx, err)
		}
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return Classify(fmt.Errorf("store: commit: %w", err))
	}
	return nil
}

// ErrRollback is returned by a function Within runs to have its
// transaction rolled back by choice rather than for a failure (a request
// refused with an answer below 500); Within returns it as it is.
var ErrRollback = apperr.New(apperr.Internal, "store: rolled back by choice")

// runGuarded runs fn; should it panic, the transaction is marked failed
// and rolled back (ending its span and freeing its connection) before the
// panic goes on.
func (db *DB) runGuarded(ctx context.Context, tx *ent.Tx, fn func(ctx context.Context, tx *ent.Tx) error) error {
	defer func() {
		if r := recover(); r != nil {
			db.tr.failed(ctx, fmt.Errorf("store: panic in transaction: %v", r))
			_ = tx.Rollback()
			panic(r)
		}
	}()
	return fn(ctx, tx)
}

// Failed marks the transaction whose context is ctx (from Begin) failed
// with err in its trace: for a caller that rolls a transaction back
// itself, when the cause is an error rather than a refusal it chose.
func (db *DB) Failed(ctx context.Context, err error) { db.tr.failed(ctx, err) }

// Begin starts a transaction; the caller commits or rolls back, and runs
// the transaction's statements with the context returned: it carries the
// transaction's span, which its commit or rollback ends. Most code wants
// Within.
func (db *DB) Begin(ctx context.Context) (context.Context, *ent.Tx, error) {
	ctx, tx, err := db.tr.transaction(ctx, db.write.Tx)
	if err != nil {
		return ctx, nil, Classify(fmt.Errorf("store: begin: %w", err))
	}
	return ctx, tx, nil
}

// OnCommit runs fn after tx commits (at once when tx is nil). Use it to
// wake workers and subscribers; never for effects that must not be lost.
func OnCommit(tx *ent.Tx, fn func()) {
	if tx == nil {
		fn()
		return
	}
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			if err == nil {
				fn()
			}
			return err
		})
	})
}

// IsUniqueViolation reports whether err is a unique-constraint violation on
// either database.
func IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	if ent.IsConstraintError(err) {
		return true
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code == "23505"
	}
	// SQLite answers with extended result codes: a unique index's and a
	// primary key's refusals are their own.
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		c := liteErr.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_UNIQUE || c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// IsOutOfRange reports whether err is PostgreSQL refusing a value its
// column cannot hold (a bigint sum that overflows).
func IsOutOfRange(err error) bool {
	var pqErr *pq.Error
	return errors.As(err, &pqErr) && pqErr.Code == "22003"
}

// Classify turns database unavailability into UNAVAILABLE; other errors pass.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	if unreachable(err) {
		return apperr.Wrap(apperr.Unavailable, dbUnavailable{err}, "the database is unavailable; try again shortly")
	}
	if statementCanceled(err) {
		return apperr.Wrap(apperr.Unavailable, dbUnavailable{err}, "the database did not answer in time; try again shortly")
	}
	if ReadOnly(err) {
		return apperr.Wrap(apperr.Unavailable, dbUnavailable{err}, "the database takes no writes at the moment; try again shortly")
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "57014" {
		// query_canceled: the statement outlasted its context (the
		// request's deadline) and the driver had PostgreSQL cancel it, as
		// SQLite's statements end with the context's DeadlineExceeded.
		return apperr.Wrap(apperr.Unavailable, dbUnavailable{err}, "the database did not answer in time; try again shortly")
	}
	if errors.As(err, &pqErr) && (pqErr.Code == "22021" || pqErr.Code == "22P05") {
		// Text PostgreSQL cannot hold (a NUL, invalid UTF-8) that no field
		// check caught: the request's fault, not the service's.
		return apperr.Wrap(apperr.Validation, err, "the request holds text that is not valid UTF-8 or has NUL characters")
	}
	if IsOutOfRange(err) {
		// A sum past what a column holds (a balance of absurd size).
		return apperr.Wrap(apperr.Validation, err, "an amount in the request would take a stored value past the most it can hold")
	}
	return err
}

// dbUnavailable marks the cause of an UNAVAILABLE error Classify made: the
// database's unavailability, as opposed to another's (a payment provider's
// unclear answer is UNAVAILABLE too).
type dbUnavailable struct{ err error }

func (e dbUnavailable) Error() string { return e.err.Error() }
func (e dbUnavailable) Unwrap() error { return e.err }

// DatabaseUnavailable reports whether err says the database is unavailable
// (unreachable, not answering in time, or taking no writes), as Classify
// tells it; another service's unavailability is not the database's.
func DatabaseUnavailable(err error) bool {
	var m dbUnavailable
	return errors.As(Classify(err), &m)
}

// unreachableClasses and unreachableStates are the PostgreSQL SQLSTATE
// classes and codes that say the database cannot be reached or used now,
// whatever the statement: unreachable's table. A code that only comes while
// a session opens (a database that does not exist or takes no connections)
// needs no row: every failure to open a session is unreachable.
var (
	unreachableClasses = map[pqerror.Class]bool{
		"08": true, // connection exception
		"53": true, // insufficient resources: too many connections (53300), disk full, out of memory
	}
	unreachableStates = map[pqerror.Code]bool{
		"57P01": true, // admin_shutdown
		"57P02": true, // crash_shutdown
		"57P03": true, // cannot_connect_now: starting up, shutting down, in recovery
		"57P04": true, // database_dropped
		"57P05": true, // idle_session_timeout: the server closed the connection
	}
)

// unreachable reports whether err says the database cannot be reached or will
// not serve (answered 503 UNAVAILABLE), as opposed to refusing a statement: a
// session that could not be opened (refused, the database gone or not
// accepting connections, bad credentials); a connection reset, closed
// mid-answer or timed out; the server shutting down; too many connections
// or no resources left.
func unreachable(err error) bool {
	var cf connectFailed
	if errors.As(err, &cf) {
		return true
	}
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return unreachableClasses[pqErr.Code.Class()] || unreachableStates[pqErr.Code]
	}
	var netErr net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, sql.ErrConnDone) || errors.As(err, &netErr)
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
