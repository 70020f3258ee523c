package store_test

import (
	"context"
	"testing"

	"merchantpay/ent"
	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
)

// TestSnapshotLeavesConnectionsSound: a snapshot sees REPEATABLE READ and
// writes nothing, and the connection it ran on serves later transactions
// unharmed. lib/pq's own BeginTx left a watch armed on the connection that
// every later commit ran again; the third panicked, killing the process an
// hour after start (the ledger check's first run).
func TestSnapshotLeavesConnectionsSound(t *testing.T) {
	url := testdb.MigratedPostgresURL(t)
	// A context that can be cancelled (as a job's is) and is not.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := store.OpenWith(ctx, url, store.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Snapshot(ctx, func(ctx context.Context, tx *ent.Tx) error {
		var level, readOnly string
		rows, err := tx.QueryContext(ctx, "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&level, &readOnly); err != nil {
				return err
			}
		}
		if level != "repeatable read" || readOnly != "on" {
			t.Errorf("snapshot: isolation %q, read only %q; want repeatable read, on", level, readOnly)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		err := db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			_, err := tx.ExecContext(ctx, "SELECT 1")
			return err
		})
		if err != nil {
			t.Fatalf("transaction %d after the snapshot: %v", i+1, err)
		}
	}
}
