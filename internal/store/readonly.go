package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A database can answer and still take no writes: a PostgreSQL server
// demoted to a hot standby in a failover, or one an operator fenced with
// default_transaction_read_only. Its refusals are not the request's fault
// nor a fault of the service: the request may be tried again once writes
// are back (503 UNAVAILABLE), and /readyz says the instance is not ready
// meanwhile.
//
// The service begins its transactions with a plain BEGIN (see
// cachingConn.BeginTx), so the server's default decides whether a
// transaction may write: a fenced database refuses the first write, as a
// standby does, rather than being overridden by BEGIN READ WRITE.

// ErrReadOnly is Writable's answer for a database that answers but takes
// no writes.
var ErrReadOnly = errors.New("store: the database takes no writes (read-only or in recovery)")

// ReadOnly reports whether err is the database refusing a write because it
// takes none at the moment:
//   - PostgreSQL 25006 read_only_sql_transaction: a write in a transaction
//     that is read-only (a standby, or default_transaction_read_only);
//   - PostgreSQL 0A000 feature_not_supported: what a standby answers to
//     BEGIN READ WRITE ("cannot set transaction read-write mode during
//     recovery"). The code is general, but the service sends no statement
//     PostgreSQL does not support; the only other 0A000 it can meet is a
//     cached plan invalidated by a schema change ("cached plan must not
//     change result type"), after which the statement is prepared afresh
//     (cachingConn.forget), so it too succeeds when tried again;
//   - SQLite SQLITE_READONLY and its extended codes.
func ReadOnly(err error) bool {
	var pqErr *pq.Error
	if errors.As(err, &pqErr) {
		return pqErr.Code == "25006" || pqErr.Code == "0A000"
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		return liteErr.Code()&0xff == sqlite3.SQLITE_READONLY
	}
	return false
}

// Writable checks that the database answers and would take a write now:
// nil, ErrReadOnly, or the error of a database that does not answer. It is
// the readiness check, run often: one round trip on PostgreSQL, a ping and
// a pragma on SQLite.
func (db *DB) Writable(ctx context.Context) error {
	if !db.IsPostgres() {
		if err := db.sqlR.PingContext(ctx); err != nil {
			return err
		}
		// The writer connection, as writes see it.
		var queryOnly bool
		if err := db.sqlW.QueryRowContext(ctx, "PRAGMA query_only").Scan(&queryOnly); err != nil {
			return err
		}
		if queryOnly {
			return ErrReadOnly
		}
		return nil
	}
	conn, err := db.sqlW.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// Outside an explicit transaction the statement runs in one begun as
	// the service's are (a plain BEGIN), so it sees both a standby and a
	// default_transaction_read_only fence.
	var recovering, readOnly bool
	err = conn.QueryRowContext(ctx,
		"SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'").Scan(&recovering, &readOnly)
	if err != nil {
		return err
	}
	if recovering || readOnly {
		// The session keeps the setting it started with: once writes are
		// back, only new connections have them.
		_ = conn.Raw(func(dc any) error {
			if c, ok := dc.(*cachingConn); ok {
				c.readOnly = true
			}
			return nil
		})
		return fmt.Errorf("%w (in recovery: %t, transaction_read_only: %t)", ErrReadOnly, recovering, readOnly)
	}
	return nil
}

// noteReadOnly marks the connection to be closed, not pooled, when err
// says its server takes no writes: its session may have started under a
// fence since lifted, or be on a server demoted in a failover while
// another was promoted; a new connection finds out which.
func (c *cachingConn) noteReadOnly(err error) {
	if err != nil && ReadOnly(err) {
		c.readOnly = true
	}
}

// IsValid keeps a connection out of the pool once it met a read-only
// refusal.
func (c *cachingConn) IsValid() bool { return !c.readOnly && c.pqConn.IsValid() }
