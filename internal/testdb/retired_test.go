package testdb_test

import (
	"context"
	"testing"

	"merchantpay/ent/migrate"
	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
)

// A database made by an earlier schema loses the indexes this one retired
// when it is migrated again, and keeps every index of the present schema.
func TestMigrateDropsRetiredIndexes(t *testing.T) {
	// A retired name must not be the present schema's: Migrate would
	// create that index and drop it again.
	for _, tb := range migrate.Tables {
		for _, ix := range tb.Indexes {
			for _, name := range store.RetiredIndexes {
				if ix.Name == name {
					t.Errorf("index %s of %s is in the schema and retired", name, tb.Name)
				}
			}
		}
	}
	testdb.Each(t, func(t *testing.T, u string) {
		db := testdb.Open(t, u)
		ctx := context.Background()
		count := func() (n int) {
			q := `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = $1`
			if db.IsPostgres() {
				q = `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1`
			}
			for _, name := range append([]string{"transaction_type_next_run_at"}, store.RetiredIndexes...) {
				var c int
				if err := db.SQL().QueryRowContext(ctx, q, name).Scan(&c); err != nil {
					t.Fatal(err)
				}
				n += c
			}
			return n
		}
		if n := count(); n != 1 {
			t.Fatalf("after a fresh migration: %d of the indexes found, want only the present claim index", n)
		}
		// Recreate three as an older schema had them.
		for _, ddl := range []string{
			"CREATE INDEX transaction_next_run_at ON transactions (next_run_at)",
			"CREATE INDEX event_merchant_id_mode ON events (merchant_id, mode)",
			"CREATE UNIQUE INDEX ledgeraccount_owner_mode_currency_kind ON ledger_accounts (owner, mode, currency, kind)",
		} {
			if _, err := db.SQL().ExecContext(ctx, ddl); err != nil {
				t.Fatal(err)
			}
		}
		if n := count(); n != 4 {
			t.Fatalf("recreated: %d", n)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if n := count(); n != 1 {
			t.Errorf("after migrating again: %d of the indexes found, want only the present claim index", n)
		}
	})
}
