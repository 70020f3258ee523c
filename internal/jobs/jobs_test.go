package jobs_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/emailnotification"
	"merchantpay/internal/jobs"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// TestInBatchAll: a batch is recorded in one transaction; when one item
// fails, the others are still recorded, each on its own, and only the bad
// item reports an error.
func TestInBatchAll(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, dbURL string) {
		ctx := tenant.System(context.Background())
		db, err := store.Open(ctx, dbURL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		ids := []string{"eml_a", "eml_b", "eml_c"}
		now := time.Now().UTC().Truncate(time.Millisecond)
		for _, id := range ids {
			if err := db.Reader().EmailNotification.Create().SetID(id).SetMerchantID("m").SetMode("test").
				SetEventID("evt_" + id).SetEventType("withdrawal.success").SetToAddress("a@example.com").
				SetSubject("s").SetBody("b").SetStatus("pending").SetNextAttemptAt(now).
				SetCreatedAt(now).SetUpdatedAt(now).Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
		bad := errors.New("bad item")
		var calls int
		record := func(ctx context.Context, tx *ent.Tx, batch []string) error {
			for _, id := range batch {
				calls++
				if tx == nil {
					t.Fatalf("%s recorded outside a transaction", id)
				}
				if err := tx.Client().EmailNotification.UpdateOneID(id).SetStatus("kept").Exec(ctx); err != nil {
					return err
				}
				if id == "eml_b" {
					return bad
				}
			}
			return nil
		}
		errs := jobs.InBatchAll(ctx, db, ids, record)
		if !errors.Is(errs[1], bad) || errs[0] != nil || errs[2] != nil {
			t.Fatalf("errors %v", errs)
		}
		if calls != 2+3 { // the batch up to the bad item, then each alone
			t.Errorf("%d calls", calls)
		}
		kept, err := db.Reader().EmailNotification.Query().Where(emailnotification.Status("kept")).IDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(kept) != 2 || kept[0] == "eml_b" || kept[1] == "eml_b" {
			t.Errorf("kept %v; want eml_a and eml_c only", kept)
		}

		// A batch that succeeds is one transaction: one call, with every
		// item.
		var batches [][]string
		errs = jobs.InBatchAll(ctx, db, []string{"eml_a", "eml_c"}, func(ctx context.Context, tx *ent.Tx, batch []string) error {
			if tx == nil {
				t.Fatal("batch recorded outside a transaction")
			}
			batches = append(batches, slices.Clone(batch))
			return nil
		})
		if errs[0] != nil || errs[1] != nil || len(batches) != 1 || !slices.Equal(batches[0], []string{"eml_a", "eml_c"}) {
			t.Errorf("errors %v, batches %v; want one batch [eml_a eml_c]", errs, batches)
		}
	})
}
