package store

import (
	"context"
	"database/sql"
	"fmt"

	"merchantpay/ent"
)

// Snapshot runs fn in a read-only transaction that sees one consistent
// state of the database, however long it reads: a check across tables
// (the ledger's invariants) must not see a posting's entries from before a
// commit and its balance from after it. On PostgreSQL that is a REPEATABLE
// READ READ ONLY transaction, which takes no locks; on SQLite a transaction
// on the writer, which holds writes back while fn reads. fn reads through
// tx, handed to it as an argument; it is rolled back when fn returns.
func (db *DB) Snapshot(ctx context.Context, fn func(ctx context.Context, tx *ent.Tx) error) error {
	opts := &sql.TxOptions{}
	if db.IsPostgres() {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	ctx, tx, err := db.tr.transaction(ctx, func(ctx context.Context) (*ent.Tx, error) {
		return db.write.BeginTx(ctx, opts)
	})
	if err != nil {
		return Classify(fmt.Errorf("store: begin snapshot: %w", err))
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(ctx, tx); err != nil {
		db.tr.failed(ctx, err)
		return err
	}
	return nil
}

// Pools names the connection pools: one on PostgreSQL, the writer and the
// readers on SQLite (the metrics of each).
func (db *DB) Pools() map[string]*sql.DB {
	if db.sqlR == db.sqlW {
		return map[string]*sql.DB{db.Dialect: db.sqlW}
	}
	return map[string]*sql.DB{db.Dialect + "-writer": db.sqlW, db.Dialect + "-readers": db.sqlR}
}
