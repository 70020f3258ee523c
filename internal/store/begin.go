package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
)

// How a transaction begins on a database connection: the statements its
// options are sent as, and the end that disarms the connection's watch
// (stall.go).

// BeginTx watches the BEGIN; the transaction's end (txEnd) runs under the
// last statement's watch, then disarms it. A transaction with default
// options begins with a plain BEGIN (lib/pq would send BEGIN READ WRITE),
// so that the server's default decides whether it may write: a database
// fenced with default_transaction_read_only refuses its writes, as a
// standby does (readonly.go). lib/pq's own watch of the transaction is
// not armed then; each statement still has its own, and this file's.
//
// A transaction with options (the ledger check's snapshot) also begins
// with a plain BEGIN, followed by SET TRANSACTION: lib/pq's BeginTx arms a
// watch of the transaction that it never disarms, so every later commit
// on the connection ran it again, and the third one panicked ("attempt to
// set nil err"), killing the process. TestSnapshotLeavesConnectionsSound
// holds that.
func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.watchCtx(ctx)
	set, err := setTransaction(opts)
	if err != nil {
		return nil, err
	}
	tx, err := c.pqConn.Begin() //nolint:staticcheck // the plain BEGIN is the point
	if err == nil && set != "" {
		if _, err = c.pqConn.ExecContext(ctx, set, nil); err != nil {
			_ = tx.Rollback()
		}
	}
	if err != nil {
		c.noteReadOnly(err)
		return nil, err
	}
	return txEnd{tx, c}, nil
}

// setTransaction is the SET TRANSACTION statement of opts ("" for the
// default options).
func setTransaction(opts driver.TxOptions) (string, error) {
	if opts == (driver.TxOptions{}) {
		return "", nil
	}
	var level string
	switch sql.IsolationLevel(opts.Isolation) {
	case sql.LevelDefault:
	case sql.LevelReadCommitted:
		level = " ISOLATION LEVEL READ COMMITTED"
	case sql.LevelRepeatableRead:
		level = " ISOLATION LEVEL REPEATABLE READ"
	case sql.LevelSerializable:
		level = " ISOLATION LEVEL SERIALIZABLE"
	default:
		return "", fmt.Errorf("store: isolation level %d not supported", opts.Isolation)
	}
	if opts.ReadOnly {
		return "SET TRANSACTION" + level + " READ ONLY", nil
	}
	return "SET TRANSACTION" + level + " READ WRITE", nil
}

type txEnd struct {
	driver.Tx
	c *cachingConn
}

func (t txEnd) Commit() error {
	err := t.Tx.Commit()
	t.c.unwatch()
	return err
}

func (t txEnd) Rollback() error {
	err := t.Tx.Rollback()
	t.c.unwatch()
	return err
}
