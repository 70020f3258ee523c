package ledger_test

import (
	"context"
	"testing"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"merchantpay/ent/idempotencyrecord"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// TestDebitCarriesPreludes: what store.Prelude put off is written with the
// put-off debit (in the debit's own statement on PostgreSQL), all of it or
// nothing: a prelude that writes no row fails the debit, and a refused
// debit writes no prelude.
func TestDebitCarriesPreludes(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.credit(t, acme, money.NGN, 10_000)
		// record inserts an idempotency record, or nothing if key is taken.
		record := func(key string) store.Stmt { return f.record(key, true) }
		run := func(amount int64, keys ...string) error {
			var ps []store.Stmt
			for _, k := range keys {
				ps = append(ps, record(k))
			}
			return f.putOffDebit(f.ctx, ledger.Posting{TransactionRef: "WTH-prelude", Memo: "withdrawal"}, amount, true, ps...)
		}
		records := func() int {
			n, err := f.db.Client(f.ctx).IdempotencyRecord.Query().Count(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}

		if err := run(1_000, "a", "b"); err != nil {
			t.Fatalf("debit with two preludes: %v", err)
		}
		f.expect(t, acme, money.NGN, 9_000, 0)
		if n := records(); n != 2 {
			t.Fatalf("%d records after the first debit, want 2", n)
		}
		// "a" is taken: its prelude writes nothing, so neither "c" nor the
		// debit may be written.
		if err := run(1_000, "c", "a"); err == nil {
			t.Fatal("a prelude that wrote nothing did not fail the debit")
		}
		f.expect(t, acme, money.NGN, 9_000, 0)
		if n := records(); n != 2 {
			t.Fatalf("%d records after a failed prelude, want 2", n)
		}
		// A refused debit writes no prelude.
		if err := run(20_000, "d"); err == nil {
			t.Fatal("a debit over the balance was made")
		}
		f.expect(t, acme, money.NGN, 9_000, 0)
		if n := records(); n != 2 {
			t.Fatalf("%d records after a refused debit, want 2", n)
		}
		// Without WithLast a prelude runs at once.
		if err := f.db.Tx(tenant.With(f.ctx, acme), func(ctx context.Context) error {
			return store.Prelude(ctx, record("e"))
		}); err != nil {
			t.Fatal(err)
		}
		if n := records(); n != 3 {
			t.Fatalf("%d records after an unmarked prelude, want 3", n)
		}
	})
}

// record is the statement of an idempotency record of acme's under key,
// the prelude a keyed request puts off; with orNothing, a taken key writes
// no row instead of failing.
func (f *fixture) record(key string, orNothing bool) store.Stmt {
	ins := entsql.Dialect(f.db.Dialect).Insert(idempotencyrecord.Table).
		Columns(idempotencyrecord.FieldMerchantID, idempotencyrecord.FieldMode, idempotencyrecord.FieldKey,
			idempotencyrecord.FieldRequestHash, idempotencyrecord.FieldStatusCode, idempotencyrecord.FieldBody,
			idempotencyrecord.FieldContentType, idempotencyrecord.FieldCreatedAt, idempotencyrecord.FieldExpiresAt).
		Values(acme.MerchantID, acme.Mode, key, "h", 200, []byte("{}"), "application/json", t0, t0.Add(24*time.Hour))
	if orNothing {
		ins.OnConflict(entsql.ConflictColumns(idempotencyrecord.FieldMerchantID, idempotencyrecord.FieldMode, idempotencyrecord.FieldKey),
			entsql.DoNothing())
	}
	q, args := ins.Query()
	return store.Stmt{SQL: q, Args: args}
}

// putOffDebit debits acme's NGN balance by amount with posting p in a
// transaction of its own, as a request does: preludes put off (keyed:
// store.WithLast) or run at once, the debit last (store.Last), then
// RunLast and the commit.
func (f *fixture) putOffDebit(ctx context.Context, p ledger.Posting, amount int64, keyed bool, preludes ...store.Stmt) error {
	tx, err := f.db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after commit
	ctx = store.WithTx(tenant.With(ctx, acme), tx)
	if keyed {
		ctx = store.WithLast(ctx)
	}
	for _, st := range preludes {
		if err := store.Prelude(ctx, st); err != nil {
			return err
		}
	}
	if err := store.Last(ctx, func(ctx context.Context) error {
		_, err := f.l.Debit(ctx, p, acme, ledger.PayoutsInFlight, money.NGN, amount)
		return err
	}); err != nil {
		return err
	}
	if err := store.RunLast(ctx); err != nil {
		return err
	}
	return tx.Commit()
}
