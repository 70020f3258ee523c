package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lib/pq"

	"merchantpay/internal/apperr"
	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
)

// A database taking no writes is UNAVAILABLE (503), by its error code:
// PostgreSQL's read-only transaction (25006), its refusal of BEGIN READ
// WRITE in recovery (0A000, whatever the message: that code is also a
// cached plan gone stale, which passes on a retry too), and SQLite's
// SQLITE_READONLY. Other codes are not.
func TestClassifyReadOnly(t *testing.T) {
	for name, err := range map[string]error{
		"read-only transaction": &pq.Error{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"},
		"begin in recovery":     &pq.Error{Code: "0A000", Message: "cannot set transaction read-write mode during recovery"},
		"other 0A000":           &pq.Error{Code: "0A000", Message: "cached plan must not change result type"},
		"wrapped":               fmt.Errorf("ledger: insert entries: %w", &pq.Error{Code: "25006"}),
	} {
		if !store.ReadOnly(err) {
			t.Errorf("%s: not read-only", name)
		}
		if e := apperr.As(store.Classify(err)); e.Kind != apperr.Unavailable {
			t.Errorf("%s: %s, want UNAVAILABLE", name, e.Kind)
		}
	}
	for name, err := range map[string]error{
		"other 25xxx":   &pq.Error{Code: "25P02", Message: "current transaction is aborted"},
		"serialization": &pq.Error{Code: "40001", Message: "could not serialize access"},
		"unique":        &pq.Error{Code: "23505", Message: "duplicate key"},
		"plain":         errors.New("read-only transaction"), // text says nothing
		"already typed": apperr.New(apperr.Validation, "bad"),
	} {
		if store.ReadOnly(err) {
			t.Errorf("%s: read-only", name)
		}
		if e := apperr.As(store.Classify(err)); e.Kind == apperr.Unavailable {
			t.Errorf("%s: classified UNAVAILABLE", name)
		}
	}
}

// SQLite's own refusal of a write to a read-only database is read-only,
// and its other errors are not.
func TestClassifySQLiteReadOnly(t *testing.T) {
	db := testdb.Open(t, testdb.MigratedSQLiteURL(t))
	ctx := context.Background()
	if _, err := db.SQL().ExecContext(ctx, "SELECT * FROM no_such_table"); err == nil || store.ReadOnly(err) {
		t.Errorf("missing table: %v, read-only %t", err, store.ReadOnly(err))
	}
	if _, err := db.SQL().ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
		t.Fatal(err)
	}
	_, err := db.SQL().ExecContext(ctx, "CREATE TABLE t (a INTEGER)")
	if !store.ReadOnly(err) || apperr.As(store.Classify(err)).Kind != apperr.Unavailable {
		t.Errorf("write under query_only: %v, read-only %t", err, store.ReadOnly(err))
	}
	if err := db.Writable(ctx); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Writable under query_only: %v, want ErrReadOnly", err)
	}
}
