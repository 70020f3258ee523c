package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/ledger"
	"merchantpay/internal/ledger/ledgertest"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

var (
	acme  = tenant.Tenant{MerchantID: "11111111-1111-4111-8111-111111111111", Mode: tenant.Test}
	other = tenant.Tenant{MerchantID: "22222222-2222-4222-8222-222222222222", Mode: tenant.Test}
	t0    = time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
)

type fixture struct {
	db    *store.DB
	l     *ledger.Service
	clock *clock.Fake
	ctx   context.Context
}

// each runs fn on a fresh, migrated database of every kind and checks the
// ledger's invariants afterwards.
func each(t *testing.T, fn func(t *testing.T, f *fixture)) {
	t.Helper()
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		f := &fixture{db: db, clock: clock.NewFake(t0), ctx: context.Background()}
		f.l = ledger.New(db, f.clock, rails.SimulationsInEveryMode)
		fn(t, f)
		if err := ledger.Check(context.Background(), db); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
	})
}

func (f *fixture) balance(t *testing.T, tn tenant.Tenant, c money.Currency) ledger.Balance {
	t.Helper()
	b, err := ledgertest.Balance(tenant.With(f.ctx, tn), f.l, c)
	if err != nil {
		t.Fatalf("balance: %v", err)
	}
	return b
}

func (f *fixture) expect(t *testing.T, tn tenant.Tenant, c money.Currency, available, pending int64) {
	t.Helper()
	b := f.balance(t, tn, c)
	if b.Available != available || b.Pending != pending {
		t.Fatalf("%s balance = %d available, %d pending; want %d, %d", c, b.Available, b.Pending, available, pending)
	}
}

func (f *fixture) entryCount(t *testing.T) int {
	t.Helper()
	n, err := f.db.Reader().LedgerEntry.Query().Count(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) credit(t *testing.T, tn tenant.Tenant, c money.Currency, amount int64) ledger.Posting {
	t.Helper()
	p, err := f.l.Credit(f.ctx, nil, ledger.Posting{TransactionRef: "DEP-test", Memo: "deposit"}, tn, ledger.RailsClearing, c, amount)
	if err != nil {
		t.Fatalf("credit: %v", err)
	}
	return p
}

func isInsufficient(err error) bool { return apperr.Is(err, apperr.InsufficientBalance) }

func TestPostValidation(t *testing.T) {
	merchant := ledger.MerchantAccount(acme, money.NGN)
	clearing := ledger.SystemAccount(tenant.Test, money.NGN, ledger.RailsClearing)
	usdt := ledger.MerchantAccount(acme, money.USDT)
	fxUSDT := ledger.SystemAccount(tenant.Test, money.USDT, ledger.FX)
	fxNGN := ledger.SystemAccount(tenant.Test, money.NGN, ledger.FX)
	tests := []struct {
		name    string
		entries []ledger.Entry
		want    error // nil: accepted
	}{
		{"balanced", []ledger.Entry{{Account: clearing, Amount: -500}, {Account: merchant, Amount: 500}}, nil},
		{"three legs", []ledger.Entry{{Account: clearing, Amount: -500}, {Account: merchant, Amount: 490},
			{Account: ledger.SystemAccount(tenant.Test, money.NGN, ledger.Fees), Amount: 10}}, nil},
		{"two currencies, each balanced", []ledger.Entry{
			{Account: fxNGN, Amount: -160000}, {Account: merchant, Amount: 160000},
			{Account: fxUSDT, Amount: -1_000_000}, {Account: usdt, Amount: 1_000_000}}, nil},
		{"unbalanced", []ledger.Entry{{Account: clearing, Amount: -500}, {Account: merchant, Amount: 501}}, ledger.ErrUnbalanced},
		{"zero overall but not per currency", []ledger.Entry{
			{Account: fxNGN, Amount: -100}, {Account: usdt, Amount: 100}}, ledger.ErrUnbalanced},
		{"one entry", []ledger.Entry{{Account: merchant, Amount: 0}}, ledger.ErrInvalid},
		{"zero amount", []ledger.Entry{{Account: clearing, Amount: 0}, {Account: merchant, Amount: 0}}, ledger.ErrInvalid},
		{"bad bucket", []ledger.Entry{{Account: clearing, Amount: -1}, {Account: merchant, Bucket: "frozen", Amount: 1}}, ledger.ErrInvalid},
		{"mixed modes", []ledger.Entry{{Account: ledger.SystemAccount(tenant.Live, money.NGN, ledger.RailsClearing), Amount: -1},
			{Account: merchant, Amount: 1}}, ledger.ErrInvalid},
		{"merchant with a system kind", []ledger.Entry{{Account: clearing, Amount: -1},
			{Account: ledger.Account{Owner: acme.MerchantID, Mode: tenant.Test, Currency: money.NGN, Kind: ledger.Fees}, Amount: 1}}, ledger.ErrInvalid},
		{"unknown currency", []ledger.Entry{{Account: ledger.SystemAccount(tenant.Test, "EUR", ledger.FX), Amount: -1},
			{Account: ledger.MerchantAccount(acme, "EUR"), Amount: 1}}, ledger.ErrInvalid},
	}
	each(t, func(t *testing.T, f *fixture) {
		for _, tt := range tests {
			before := f.entryCount(t)
			_, err := f.l.Post(f.ctx, nil, ledger.Posting{Memo: tt.name, Entries: tt.entries})
			if tt.want == nil {
				if err != nil {
					t.Errorf("%s: %v", tt.name, err)
				}
				continue
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("%s: err = %v, want %v", tt.name, err, tt.want)
			}
			if after := f.entryCount(t); after != before {
				t.Errorf("%s: %d entries written by a refused posting", tt.name, after-before)
			}
		}
		f.expect(t, acme, money.NGN, 500+490+160000, 0)
		f.expect(t, acme, money.USDT, 1_000_000, 0)
	})
}

func TestCreditDebit(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		// A debit of an account that does not exist yet is a zero balance.
		_, err := f.l.Debit(f.ctx, nil, ledger.Posting{}, acme, ledger.PayoutsInFlight, money.NGN, 1)
		if !isInsufficient(err) || !strings.Contains(err.Error(), "insufficient balance: 0 NGN available, 0.01 NGN needed") {
			t.Fatalf("debit of a missing account: %v", err)
		}
		p := f.credit(t, acme, money.NGN, 100050)
		if p.ID == "" || !p.CreatedAt.Equal(t0) {
			t.Errorf("posting: %+v", p)
		}
		f.expect(t, acme, money.NGN, 100050, 0)
		if _, err := f.l.Debit(f.ctx, nil, ledger.Posting{TransactionRef: "WTH-1"}, acme, ledger.PayoutsInFlight, money.NGN, 40000); err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.NGN, 60050, 0)
		before := f.entryCount(t)
		_, err = f.l.Debit(f.ctx, nil, ledger.Posting{}, acme, ledger.PayoutsInFlight, money.NGN, 60051)
		if !isInsufficient(err) {
			t.Fatalf("overdraft: %v", err)
		}
		if msg := apperr.As(err).Message; msg != "insufficient balance: 600.5 NGN available, 600.51 NGN needed" {
			t.Errorf("message %q", msg)
		}
		if f.entryCount(t) != before {
			t.Error("a refused debit left entries")
		}
		f.expect(t, acme, money.NGN, 60050, 0)
		// The exact balance can be taken.
		if _, err := f.l.Debit(f.ctx, nil, ledger.Posting{}, acme, ledger.PayoutsInFlight, money.NGN, 60050); err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.NGN, 0, 0)
		// Other merchants, currencies and modes are untouched.
		f.expect(t, other, money.NGN, 0, 0)
		f.expect(t, acme, money.GHS, 0, 0)
		f.expect(t, tenant.Tenant{MerchantID: acme.MerchantID, Mode: tenant.Live}, money.NGN, 0, 0)
		// Helpers refuse non-positive amounts and ready-made entries.
		if _, err := f.l.Credit(f.ctx, nil, ledger.Posting{}, acme, ledger.RailsClearing, money.NGN, 0); !errors.Is(err, ledger.ErrInvalid) {
			t.Errorf("credit 0: %v", err)
		}
		if _, err := f.l.Debit(f.ctx, nil, ledger.Posting{}, acme, ledger.Fees, money.NGN, -5); !errors.Is(err, ledger.ErrInvalid) {
			t.Errorf("debit -5: %v", err)
		}
	})
}

func TestRollbackWithCaller(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.credit(t, acme, money.USD, 1000)
		err := f.db.Within(f.ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			if _, err := f.l.Credit(ctx, tx, ledger.Posting{}, acme, ledger.RailsClearing, money.USD, 500); err != nil {
				return err
			}
			// The posting's entries and the credit above are written, and
			// the refused debit makes the whole transaction roll back.
			_, err := f.l.Debit(ctx, tx, ledger.Posting{}, acme, ledger.PayoutsInFlight, money.USD, 2000)
			return err
		})
		if !isInsufficient(err) {
			t.Fatalf("err = %v", err)
		}
		f.expect(t, acme, money.USD, 1000, 0)
		if n := f.entryCount(t); n != 2 {
			t.Errorf("%d entries, want 2", n)
		}
		// A debit covered by a credit earlier in the same transaction works.
		err = f.db.Within(f.ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			if _, err := f.l.Credit(ctx, tx, ledger.Posting{}, acme, ledger.RailsClearing, money.USD, 1500); err != nil {
				return err
			}
			_, err := f.l.Debit(ctx, tx, ledger.Posting{}, acme, ledger.PayoutsInFlight, money.USD, 2500)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.USD, 0, 0)
	})
}

func TestDuplicatePostingID(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		p := ledger.Posting{ID: "DEP-1:credit", TransactionRef: "DEP-1"}
		if _, err := f.l.Credit(f.ctx, nil, p, acme, ledger.RailsClearing, money.NGN, 700); err != nil {
			t.Fatal(err)
		}
		_, err := f.l.Credit(f.ctx, nil, p, acme, ledger.RailsClearing, money.NGN, 700)
		if !errors.Is(err, ledger.ErrDuplicatePosting) {
			t.Fatalf("second posting with one id: %v", err)
		}
		f.expect(t, acme, money.NGN, 700, 0)
	})
}

func TestReverse(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		credit := f.credit(t, acme, money.BTC, 150_000_000)
		debit, err := f.l.Post(f.ctx, nil, ledger.Posting{ID: "WTH-9:debit", TransactionRef: "WTH-9", Entries: []ledger.Entry{
			{Account: ledger.MerchantAccount(acme, money.BTC), Amount: -100_000_000},
			{Account: ledger.SystemAccount(tenant.Test, money.BTC, ledger.PayoutsInFlight), Amount: 99_000_000},
			{Account: ledger.SystemAccount(tenant.Test, money.BTC, ledger.Fees), Amount: 1_000_000},
		}})
		if err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.BTC, 50_000_000, 0)

		// Taking back the credit would overdraw: refused, nothing written.
		if _, err := f.l.Reverse(f.ctx, nil, credit.ID, ""); !isInsufficient(err) {
			t.Fatalf("reverse of a spent credit: %v", err)
		}
		rev, err := f.l.Reverse(f.ctx, nil, debit.ID, "payout failed")
		if err != nil {
			t.Fatal(err)
		}
		if rev.ID != ledger.ReversalID(debit.ID) || rev.TransactionRef != "WTH-9" || rev.Memo != "payout failed" || len(rev.Entries) != 3 {
			t.Errorf("reversal: %+v", rev)
		}
		for i, e := range rev.Entries {
			if e.Amount != -debit.Entries[i].Amount || e.Account != debit.Entries[i].Account || e.Bucket != debit.Entries[i].Bucket {
				t.Errorf("entry %d: %+v is not the opposite of %+v", i, e, debit.Entries[i])
			}
		}
		f.expect(t, acme, money.BTC, 150_000_000, 0)
		if _, err := f.l.Reverse(f.ctx, nil, debit.ID, ""); !errors.Is(err, ledger.ErrAlreadyReversed) {
			t.Errorf("second reversal: %v", err)
		}
		if _, err := f.l.Reverse(f.ctx, nil, "no-such-posting", ""); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("reversal of nothing: %v", err)
		}
		if _, err := f.l.Reverse(f.ctx, nil, credit.ID, ""); err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.BTC, 0, 0)
	})
}

func TestPendingMoves(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.credit(t, acme, money.GHS, 1000)
		if _, err := f.l.Move(f.ctx, nil, ledger.Posting{}, acme, money.GHS, ledger.Available, ledger.Pending, 300); err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.GHS, 700, 300)
		if _, err := f.l.Move(f.ctx, nil, ledger.Posting{}, acme, money.GHS, ledger.Available, ledger.Pending, 701); !isInsufficient(err) {
			t.Fatalf("hold beyond available: %v", err)
		}
		_, err := f.l.Move(f.ctx, nil, ledger.Posting{}, acme, money.GHS, ledger.Pending, ledger.Available, 301)
		if !isInsufficient(err) || apperr.As(err).Message != "insufficient pending balance: 3 GHS pending, 3.01 GHS needed" {
			t.Fatalf("release beyond pending: %v", err)
		}
		f.expect(t, acme, money.GHS, 700, 300)
		// Settle part of the hold to the rails, release the rest.
		if _, err := f.l.Post(f.ctx, nil, ledger.Posting{Entries: []ledger.Entry{
			{Account: ledger.MerchantAccount(acme, money.GHS), Bucket: ledger.Pending, Amount: -200},
			{Account: ledger.SystemAccount(tenant.Test, money.GHS, ledger.PayoutsInFlight), Amount: 200},
		}}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.l.Move(f.ctx, nil, ledger.Posting{}, acme, money.GHS, ledger.Pending, ledger.Available, 100); err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.GHS, 800, 0)
		if _, err := f.l.Move(f.ctx, nil, ledger.Posting{}, acme, money.GHS, ledger.Pending, ledger.Pending, 1); !errors.Is(err, ledger.ErrInvalid) {
			t.Errorf("move to itself: %v", err)
		}
		// Credit straight into pending, on an account that does not exist yet.
		if _, err := f.l.Post(f.ctx, nil, ledger.Posting{Entries: []ledger.Entry{
			{Account: ledger.SystemAccount(tenant.Test, money.ETH, ledger.RailsClearing), Amount: -5},
			{Account: ledger.MerchantAccount(other, money.ETH), Bucket: ledger.Pending, Amount: 5},
		}}); err != nil {
			t.Fatal(err)
		}
		f.expect(t, other, money.ETH, 0, 5)
	})
}

func TestBalancesAndFund(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		ctx := tenant.With(f.ctx, acme)
		bs, err := f.l.Balances(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(bs) != len(money.All()) {
			t.Fatalf("%d balances", len(bs))
		}
		for i, b := range bs {
			if b.Currency != money.All()[i] || b.Available != 0 || b.Pending != 0 || b.UpdatedAt != nil {
				t.Errorf("empty balance %d: %+v", i, b)
			}
		}
		f.clock.Advance(time.Minute)
		b, err := f.l.Fund(ctx, nil, "USDT", decimal.RequireFromString("12.5"))
		if err != nil {
			t.Fatal(err)
		}
		if b.Currency != money.USDT || b.Available != 12_500_000 || b.UpdatedAt == nil || !b.UpdatedAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("after fund: %+v", b)
		}
		if _, err := f.l.Fund(ctx, nil, "USDT", decimal.RequireFromString("0.000001")); err != nil {
			t.Fatal(err)
		}
		bs, _ = f.l.Balances(ctx)
		if bs[3].Currency != money.USDT || bs[3].Available != 12_500_001 || bs[0].UpdatedAt != nil {
			t.Errorf("balances: %+v", bs)
		}
		for _, tc := range []struct {
			cur, amount string
			fields      []string
		}{
			{"EUR", "1", []string{"currency"}},
			{"ngn", "0", []string{"currency", "amount"}},
			{"NGN", "1.001", []string{"amount"}},
			{"NGN", "-1", []string{"amount"}},
			{"BTC", "10000000000.00000001", []string{"amount"}},
		} {
			_, err := f.l.Fund(ctx, nil, tc.cur, decimal.RequireFromString(tc.amount))
			e := apperr.As(err)
			var got []string
			for _, fe := range e.Fields {
				got = append(got, fe.Field)
			}
			if e.Kind != apperr.Validation || strings.Join(got, ",") != strings.Join(tc.fields, ",") {
				t.Errorf("fund %s %s: %v %v", tc.amount, tc.cur, err, got)
			}
		}
		if _, err := f.l.Balances(f.ctx); !errors.Is(err, tenant.ErrNoTenant) {
			t.Errorf("balances without a tenant: %v", err)
		}
	})
}

func TestCheckFindsViolations(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		f.credit(t, acme, money.NGN, 1000)
		if err := ledger.Check(f.ctx, f.db); err != nil {
			t.Fatal(err)
		}
		// A balance written directly, behind the ledger's back.
		if _, err := f.db.SQL().ExecContext(f.ctx, "UPDATE ledger_accounts SET available = available + 1"); err != nil {
			t.Fatal(err)
		}
		err := ledger.Check(f.ctx, f.db)
		if !errors.Is(err, ledger.ErrInvariant) || !strings.Contains(err.Error(), "available 1001, entries sum to 1000") {
			t.Fatalf("check after a direct write: %v", err)
		}
		if _, err := f.db.SQL().ExecContext(f.ctx, "UPDATE ledger_accounts SET available = available - 1"); err != nil {
			t.Fatal(err)
		}
		// An entry without its other leg.
		if _, err := f.db.SQL().ExecContext(f.ctx, `INSERT INTO ledger_entries
			(posting_id, seq, account_id, currency, bucket, amount, transaction_ref, memo, created_at)
			VALUES ('stray', 0, 'system:test:NGN:fees', 'NGN', 'available', 5, '', '', CURRENT_TIMESTAMP)`); err != nil {
			t.Fatal(err)
		}
		err = ledger.Check(f.ctx, f.db)
		if !errors.Is(err, ledger.ErrInvariant) || !strings.Contains(err.Error(), `posting "stray": NGN entries sum to 5`) {
			t.Fatalf("check after a one-legged posting: %v", err)
		}
		if _, err := f.db.SQL().ExecContext(f.ctx, "DELETE FROM ledger_entries WHERE posting_id = 'stray'"); err != nil {
			t.Fatal(err)
		}
		// The database itself refuses a negative balance.
		if _, err := f.db.SQL().ExecContext(f.ctx, "UPDATE ledger_accounts SET available = -1"); err == nil {
			t.Fatal("a negative balance was stored")
		}
	})
}

func TestSetup(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		for range 2 {
			if err := f.l.Setup(f.ctx); err != nil {
				t.Fatal(err)
			}
		}
		n, err := f.db.Reader().LedgerAccount.Query().Count(f.ctx)
		if err != nil || n != 2*len(money.All())*len(ledger.SystemKinds()) {
			t.Fatalf("%d system accounts, %v", n, err)
		}
		f.credit(t, acme, money.NGN, 10)
	})
}

func TestAccountIDs(t *testing.T) {
	a := ledger.MerchantAccount(acme, money.USDC)
	if a.ID() != acme.MerchantID+":test:USDC:main" || !a.TracksBalance() {
		t.Errorf("merchant account %q", a.ID())
	}
	s := ledger.SystemAccount(tenant.Live, money.NGN, ledger.RailsClearing)
	if s.ID() != "system:live:NGN:rails_clearing" || s.TracksBalance() {
		t.Errorf("system account %q", s.ID())
	}
	for _, acct := range []ledger.Account{a, s} {
		back, err := ledger.ParseAccountID(acct.ID())
		if err != nil || back != acct {
			t.Errorf("ParseAccountID(%q) = %+v, %v", acct.ID(), back, err)
		}
	}
	for _, bad := range []string{"", "a:b:c", "system:test:NGN:main", "m:test:NGN:fees", "m:prod:NGN:main", "m:test:EUR:main", "m:test:NGN:main:x"} {
		if _, err := ledger.ParseAccountID(bad); !errors.Is(err, ledger.ErrInvalid) {
			t.Errorf("ParseAccountID(%q) = %v", bad, err)
		}
	}
}

// TestConcurrentDebits: 200 goroutines each try to take 1/100 of a balance
// that covers exactly 100 of them; exactly 100 succeed and the balance never
// goes below zero, on both databases.
func TestConcurrentDebits(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		const share, takers = 12_345, 200
		f.credit(t, acme, money.NGN, 100*share)
		// Another merchant's traffic on the same system accounts meanwhile.
		f.credit(t, other, money.NGN, takers*share)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok, refused := 0, 0
		var unexpected []error
		start := make(chan struct{})
		for range takers {
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				_, err := f.l.Debit(f.ctx, nil, ledger.Posting{}, acme, ledger.PayoutsInFlight, money.NGN, share)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					ok++
				case isInsufficient(err):
					refused++
				default:
					unexpected = append(unexpected, err)
				}
			}()
			go func() {
				defer wg.Done()
				<-start
				// Each sits inside a transaction that does more work first,
				// the way an operation does.
				err := f.db.Within(f.ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
					if _, err := f.l.Move(ctx, tx, ledger.Posting{}, other, money.NGN, ledger.Available, ledger.Pending, share); err != nil {
						return err
					}
					_, err := f.l.Post(ctx, tx, ledger.Posting{Entries: []ledger.Entry{
						{Account: ledger.MerchantAccount(other, money.NGN), Bucket: ledger.Pending, Amount: -share},
						{Account: ledger.SystemAccount(tenant.Test, money.NGN, ledger.PayoutsInFlight), Amount: share - 45},
						{Account: ledger.SystemAccount(tenant.Test, money.NGN, ledger.Fees), Amount: 45},
					}})
					return err
				})
				if err != nil {
					mu.Lock()
					unexpected = append(unexpected, err)
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(unexpected) > 0 {
			t.Fatalf("%d unexpected errors, first: %v", len(unexpected), unexpected[0])
		}
		if ok != 100 || refused != 100 {
			t.Fatalf("%d debits succeeded and %d were refused; want 100 and 100", ok, refused)
		}
		f.expect(t, acme, money.NGN, 0, 0)
		f.expect(t, other, money.NGN, 0, 0)
	})
}

// A credit that would take a balance past an int64 of minor units is
// refused on both databases, naming the amount, and writes nothing
// (SQLite would have stored the sum as a float). A pending amount made
// available is checked the same way.
func TestCreditPastTheLargestBalance(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		ctx := tenant.With(f.ctx, acme)
		near := int64(math.MaxInt64 - 10)
		if _, err := f.l.Credit(ctx, nil, ledger.Posting{}, acme, ledger.SandboxFunding, money.BTC, near); err != nil {
			t.Fatal(err)
		}
		_, err := f.l.Credit(ctx, nil, ledger.Posting{}, acme, ledger.SandboxFunding, money.BTC, 11)
		if apperr.KindOf(err) != apperr.Validation || len(apperr.As(err).Fields) != 1 || apperr.As(err).Fields[0].Field != "amount" {
			t.Fatalf("credit past the largest balance: %v", err)
		}
		if b, err := ledgertest.Balance(ctx, f.l, money.BTC); err != nil || b.Available != near {
			t.Fatalf("balance after the refusal: %+v %v", b, err)
		}
		if err := ledger.Check(context.Background(), f.db); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
	})
}

// The first credits of an account, made at once, all land: the upsert on
// the account's id is the one place its row is created.
func TestConcurrentFirstCredits(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		for round := range 20 {
			tn := tenant.Tenant{MerchantID: fmt.Sprintf("33333333-3333-4333-8333-%012d", round), Mode: tenant.Test}
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := f.l.Credit(f.ctx, nil, ledger.Posting{Memo: "deposit"}, tn, ledger.RailsClearing, money.GHS, 100)
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			f.expect(t, tn, money.GHS, 800, 0)
		}
	})
}
