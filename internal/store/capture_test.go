package store_test

import (
	"context"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/ledgeraccount"
	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
)

// Capture hands back the statement an ent builder would run, runs nothing
// itself, and refuses builders that read or send more than one statement.
func TestCapture(t *testing.T) {
	testdb.Each(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		ctx := context.Background()
		now := time.Now().UTC().Truncate(time.Second)
		account := func(c *ent.Client, id string) *ent.LedgerAccountCreate {
			return c.LedgerAccount.Create().SetID(id).SetOwner("m1").SetMode("test").SetCurrency("NGN").
				SetKind("main").SetTracksBalance(true).SetCreatedAt(now).SetUpdatedAt(now)
		}
		exists := func(ctx context.Context, id string) bool {
			t.Helper()
			n, err := db.Client(ctx).LedgerAccount.Query().Where(ledgeraccount.ID(id)).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n == 1
		}
		capture := func(id string) (store.Stmt, *ent.LedgerAccount) {
			t.Helper()
			var node *ent.LedgerAccount
			st, err := db.Capture(ctx, func(ctx context.Context, c *ent.Client) error {
				var err error
				node, err = account(c, id).Save(ctx)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			return st, node
		}

		st, node := capture("m1:test:NGN:main")
		if node.ID != "m1:test:NGN:main" || !node.CreatedAt.Equal(now) || len(st.Args) == 0 {
			t.Fatalf("node %+v, statement %+v", node, st)
		}
		if exists(ctx, node.ID) {
			t.Fatal("Capture ran the statement")
		}
		// Put off in a transaction marked WithLast, it runs at RunLast.
		err := db.Tx(ctx, func(ctx context.Context) error {
			ctx = store.WithLast(ctx)
			if err := store.Prelude(ctx, st); err != nil {
				return err
			}
			if exists(ctx, node.ID) {
				t.Error("the prelude ran before RunLast")
			}
			if err := store.RunLast(ctx); err != nil {
				return err
			}
			if !exists(ctx, node.ID) {
				t.Error("RunLast did not run the prelude")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Unmarked, it runs at once; the same row again is a unique violation.
		st2, _ := capture("m1:test:GHS:main")
		err = db.Tx(ctx, func(ctx context.Context) error {
			if err := store.Prelude(ctx, st2); err != nil {
				return err
			}
			if err := store.Prelude(ctx, st); !store.IsUniqueViolation(err) {
				t.Errorf("the same row again: %v", err)
			}
			return nil
		})
		if err == nil && db.IsPostgres() {
			t.Error("PostgreSQL's transaction went on after a failed statement")
		}

		for name, build := range map[string]func(ctx context.Context, c *ent.Client) error{
			"nothing": func(context.Context, *ent.Client) error { return nil },
			"a read": func(ctx context.Context, c *ent.Client) error {
				_, err := c.LedgerAccount.Query().All(ctx)
				return err
			},
			"two statements": func(ctx context.Context, c *ent.Client) error {
				if err := account(c, "a").Exec(ctx); err != nil {
					return err
				}
				return account(c, "b").Exec(ctx)
			},
			"an insert that returns its id": func(ctx context.Context, c *ent.Client) error {
				return c.Merchant.Create().SetName("x").SetEmail("x@example.com").Exec(ctx)
			},
		} {
			if _, err := db.Capture(ctx, build); err == nil {
				t.Errorf("%s: captured", name)
			}
		}
	})
}
