package store_test

import (
	"context"
	"testing"

	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// A statement put off with Last runs at RunLast even when the context it
// was put off in has ended meanwhile (a GraphQL operation's time budget
// ends with the operation, before its request commits), and sees that
// context's values; before, such a debit failed with "context canceled"
// and every keyed GraphQL withdrawal ran a second time.
func TestLastOutlivesItsCallersContext(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		db := testdb.Open(t, u)
		ctx := tenant.System(context.Background())
		tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback() //nolint:errcheck
		txCtx := store.WithLast(store.WithTx(ctx, tx))
		type mark struct{}
		caller, cancel := context.WithCancel(context.WithValue(txCtx, mark{}, "caller's"))
		ran := false
		if err := store.Last(caller, func(ctx context.Context) error {
			ran = true
			if ctx.Value(mark{}) != "caller's" {
				t.Error("the put-off statement lost its caller's values")
			}
			_, err := db.Client(ctx).ExecContext(ctx, "SELECT 1")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if ran {
			t.Fatal("Last ran the statement at once")
		}
		cancel()
		if err := store.RunLast(txCtx); err != nil || !ran {
			t.Fatalf("RunLast after the caller's context ended: ran %v, %v", ran, err)
		}
	})
}
