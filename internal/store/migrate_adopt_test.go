package store_test

import (
	"context"
	"testing"
	"time"

	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// A database made by ent's auto-migration, as the releases before
// versioned migrations made it (here by an earlier one: it still has
// retired indexes and lacks a newer index and column), is adopted: brought
// to the baseline without losing a row, recorded as migrated, and left
// alone by the next start.
func TestMigrateAdoptsAutoMigratedDatabase(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := tenant.System(context.Background())
		db, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		testdb.AutoMigrated(t, db)
		now := time.Now().UTC().Truncate(time.Second)
		if err := db.Reader().EmailNotification.Create().SetID("eml_old").SetMerchantID("m").SetMode("test").
			SetEventID("evt_old").SetEventType("withdrawal.success").SetToAddress("a@example.com").
			SetSubject("kept").SetBody("b").SetStatus("pending").SetNextAttemptAt(now).
			SetCreatedAt(now).SetUpdatedAt(now).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		for _, ddl := range []string{
			// Retired indexes an earlier release left.
			"CREATE INDEX transaction_next_run_at ON transactions (next_run_at)",
			"CREATE INDEX event_merchant_id_mode ON events (merchant_id, mode)",
			"CREATE UNIQUE INDEX ledgeraccount_owner_mode_currency_kind ON ledger_accounts (owner, mode, currency, kind)",
			// What that release did not have yet.
			"DROP INDEX transaction_type_next_run_at",
			"ALTER TABLE email_notifications DROP COLUMN sent_at",
		} {
			if _, err := db.SQL().ExecContext(ctx, ddl); err != nil {
				t.Fatalf("%s: %v", ddl, err)
			}
		}
		if schemaLeft(t, db) == "" {
			t.Fatal("the old schema is not different from the present one")
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("adoption: %v", err)
		}
		if left := schemaLeft(t, db); left != "" {
			t.Errorf("after adoption the ent schema still wants:\n%s", left)
		}
		e, err := db.Reader().EmailNotification.Get(ctx, "eml_old")
		if err != nil || e.Subject != "kept" || !e.NextAttemptAt.Equal(now) {
			t.Errorf("the row made before adoption: %+v, %v", e, err)
		}
		ms, err := db.Migrations(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if !m.Applied {
				t.Errorf("%s pending after adoption", m.Name)
			}
		}
		// Starting again changes nothing.
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("second start: %v", err)
		}
		var n int
		if err := db.SQL().QueryRowContext(ctx, "SELECT count(*) FROM goose_db_version").Scan(&n); err != nil || n != len(ms)+1 {
			t.Errorf("%d version rows after a second start (%v), want %d", n, err, len(ms)+1)
		}
	})
}
