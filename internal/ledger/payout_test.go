package ledger_test

import (
	"errors"
	"testing"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"merchantpay/ent/idempotencyrecord"
	"merchantpay/internal/apperr"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// payout debits acme's NGN balance by amount as a withdrawal does, with
// rows written in the same statement, in a transaction of its own.
func (f *fixture) payout(t *testing.T, amount int64, key string, rows ...store.Stmt) error {
	t.Helper()
	p := ledger.Posting{TransactionRef: "WTH-" + key, Memo: "withdrawal", Entries: []ledger.Entry{
		{Account: ledger.MerchantAccount(acme, money.NGN), Amount: -amount},
		{Account: ledger.SystemAccount(acme.Mode, money.NGN, ledger.PayoutsInFlight), Amount: amount},
	}}
	_, err := f.l.Payout(tenant.With(f.ctx, acme), nil, p, rows)
	return err
}

// TestPayoutCarriesRows: the rows handed to Payout are written with the
// debit (in its one statement on PostgreSQL), all of them or nothing: a
// row that writes nothing fails the payout, and a refused payout leaves
// no row. A posting that is not one decrease of a merchant's balance is
// refused before any statement.
func TestPayoutCarriesRows(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.credit(t, acme, money.NGN, 10_000)
		run := func(amount int64, keys ...string) error {
			var rows []store.Stmt
			for _, k := range keys {
				rows = append(rows, f.record(k, true))
			}
			return f.payout(t, amount, "rows", rows...)
		}
		records := func() int {
			n, err := f.db.Reader().IdempotencyRecord.Query().Count(f.ctx)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}

		if err := run(1_000, "a", "b"); err != nil {
			t.Fatalf("payout with two rows: %v", err)
		}
		f.expect(t, acme, money.NGN, 9_000, 0)
		if n := records(); n != 2 {
			t.Fatalf("%d records after the first payout, want 2", n)
		}
		// "a" is taken: its row writes nothing, so neither "c" nor the
		// debit may be written.
		if err := run(1_000, "c", "a"); !errors.Is(err, store.ErrWroteNothing) {
			t.Fatalf("a row that wrote nothing: %v, want ErrWroteNothing", err)
		}
		f.expect(t, acme, money.NGN, 9_000, 0)
		if n := records(); n != 2 {
			t.Fatalf("%d records after a row that wrote nothing, want 2", n)
		}
		// A refused payout writes no row.
		if err := run(20_000, "d"); !apperr.Is(err, apperr.InsufficientBalance) {
			t.Fatalf("a payout over the balance: %v", err)
		}
		f.expect(t, acme, money.NGN, 9_000, 0)
		if n := records(); n != 2 {
			t.Fatalf("%d records after a refused payout, want 2", n)
		}
		// Not a payout: a credit of the merchant.
		_, err := f.l.Payout(tenant.With(f.ctx, acme), nil, ledger.Posting{Entries: []ledger.Entry{
			{Account: ledger.MerchantAccount(acme, money.NGN), Amount: 5},
			{Account: ledger.SystemAccount(acme.Mode, money.NGN, ledger.PayoutsInFlight), Amount: -5},
		}}, nil)
		if !errors.Is(err, ledger.ErrInvalid) {
			t.Fatalf("a credit as a payout: %v", err)
		}
		f.expect(t, acme, money.NGN, 9_000, 0)
		if err := ledger.Check(f.ctx, f.db); err != nil {
			t.Fatal(err)
		}
	})
}

// record is the statement of an idempotency record of acme's under key;
// with orNothing, a taken key writes no row instead of failing.
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
