package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/quote"
	"merchantpay/ent/transaction"
	"merchantpay/internal/deposits"
	"merchantpay/internal/ledger"
	"merchantpay/internal/ledger/ledgertest"
	"merchantpay/internal/money"
	"merchantpay/internal/rates"
	"merchantpay/internal/swaps"
	"merchantpay/internal/tenant"
	"merchantpay/server/servertest"
)

// counter is a query that counts its rows.
type counter interface {
	Count(ctx context.Context) (int, error)
}

// TestOperationsInHandedTransaction: the sandbox funding, a rate's creation
// and refresh, a swap and a simulated deposit write in the transaction they
// are handed and in no other (their context carries none): rolled back, it
// leaves nothing; committed, what they wrote is there.
func TestOperationsInHandedTransaction(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Handed Transactions")
		tn := tenant.Tenant{MerchantID: m.ID, Mode: tenant.Test}
		ctx := tenant.With(context.Background(), tn)
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		sys := tenant.System(context.Background())
		count := func(what string, q counter) int {
			t.Helper()
			n, err := q.Count(sys)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			return n
		}
		c := e.App.DB.Reader()
		usdt := func() int64 {
			t.Helper()
			b, err := ledgertest.Balance(ctx, e.App.Ledger, money.USDT)
			if err != nil {
				t.Fatal(err)
			}
			return b.Available
		}
		quotes := func() int { return count("quotes", c.Quote.Query().Where(quote.FromCurrency("USDT"))) }
		rows := func(typ string) int {
			return count(typ, c.Transaction.Query().Where(transaction.MerchantID(m.ID), transaction.Type(typ)))
		}
		var quoteRef string
		// handed runs op in a transaction of its own making, then commits
		// or rolls it back.
		handed := func(what string, commit bool, op func(ctx context.Context, tx *ent.Tx) error) {
			t.Helper()
			// On SQLite the handed transaction holds the one writer: an
			// operation that began another would wait for it until this
			// deadline.
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			ctx, tx, err := e.App.DB.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := op(ctx, tx); err != nil {
				_ = tx.Rollback()
				t.Fatalf("%s: %v", what, err)
			}
			if commit {
				err = tx.Commit()
			} else {
				err = tx.Rollback()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		fund := func(ctx context.Context, tx *ent.Tx) error {
			_, err := e.App.Ledger.Fund(ctx, tx, "USDT", decimal.NewFromInt(100))
			return err
		}
		createRate := func(ctx context.Context, tx *ent.Tx) error {
			from, to, amount := "USDT", "NGN", decimal.NewFromInt(10)
			q, err := e.App.Rates.Create(ctx, tx, rates.CreateInput{FromCurrency: &from, ToCurrency: &to, FromAmount: &amount})
			if err == nil {
				quoteRef = q.ID
			}
			return err
		}
		refreshRate := func(ctx context.Context, tx *ent.Tx) error {
			_, err := e.App.Rates.Refresh(ctx, tx, quoteRef)
			return err
		}
		swap := func(ctx context.Context, tx *ent.Tx) error {
			_, err := e.App.Swaps.Swap(ctx, tx, swaps.Input{RateReference: &quoteRef})
			return err
		}
		deposit := func(ctx context.Context, tx *ent.Tx) error {
			amount := decimal.NewFromInt(500)
			_, err := e.App.Deposits.Simulate(ctx, tx, deposits.Input{AccountNumber: &acc, Amount: &amount})
			return err
		}

		handed("funding", false, fund)
		if got := usdt(); got != 0 {
			t.Errorf("funding rolled back: %d USDT minor units available, want 0", got)
		}
		handed("funding", true, fund)
		if got := usdt(); got != 100_000_000 {
			t.Errorf("funding committed: %d USDT minor units available, want 100000000", got)
		}
		handed("a rate", false, createRate)
		if n := quotes(); n != 0 {
			t.Errorf("a rate rolled back: %d quotes, want 0", n)
		}
		handed("a rate", true, createRate)
		if n := quotes(); n != 1 {
			t.Errorf("a rate committed: %d quotes, want 1", n)
		}
		e.Clock.Advance(time.Second)
		before, err := c.Quote.Get(sys, quoteRef)
		if err != nil {
			t.Fatal(err)
		}
		handed("a refresh", false, refreshRate)
		if q, err := c.Quote.Get(sys, quoteRef); err != nil || !q.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("a refresh rolled back: quote updated at %v (%v), want %v", q.UpdatedAt, err, before.UpdatedAt)
		}
		handed("a refresh", true, refreshRate)
		if q, err := c.Quote.Get(sys, quoteRef); err != nil || q.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("a refresh committed: quote still updated at %v (%v)", before.UpdatedAt, err)
		}
		handed("a swap", false, swap)
		if n, got := rows(swaps.Type), usdt(); n != 0 || got != 100_000_000 {
			t.Errorf("a swap rolled back: %d swaps, %d USDT available; want 0, 100000000", n, got)
		}
		handed("a swap", true, swap)
		if n, got := rows(swaps.Type), usdt(); n != 1 || got != 90_000_000 {
			t.Errorf("a swap committed: %d swaps, %d USDT available; want 1, 90000000", n, got)
		}
		handed("a deposit", false, deposit)
		if n := rows(deposits.Type); n != 0 {
			t.Errorf("a deposit rolled back: %d deposits, want 0", n)
		}
		handed("a deposit", true, deposit)
		if n := rows(deposits.Type); n != 1 {
			t.Errorf("a deposit committed: %d deposits, want 1", n)
		}
		if err := ledger.Check(sys, e.App.DB); err != nil {
			t.Fatal(err)
		}
	})
}
