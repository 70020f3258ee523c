package deposits

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent/ledgerentry"
	"merchantpay/internal/accounts"
	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/ledger"
	"merchantpay/internal/ledger/ledgertest"
	"merchantpay/internal/merchants"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/internal/wallets"
)

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestFee(t *testing.T) {
	tests := []struct {
		fee    Fee
		amount int64
		want   int64
	}{
		{Fee{}, 100_00, 0},
		{Fee{Flat: dec("10")}, 100_00, 10_00},
		{Fee{Percent: dec("1.5")}, 100_00, 1_50},
		{Fee{Percent: dec("1.5")}, 1_01, 1}, // 1.515 kobo rounds down
		{Fee{Flat: dec("0.5"), Percent: dec("1")}, 1000_00, 10_50},
		{Fee{Percent: dec("99.99")}, money.MaxMinor(money.NGN), money.MaxMinor(money.NGN) / 10000 * 9999},
	}
	for _, tt := range tests {
		if err := tt.fee.Validate(); err != nil {
			t.Errorf("%+v: %v", tt.fee, err)
		}
		if got, err := tt.fee.On(tt.amount); err != nil || got != tt.want {
			t.Errorf("%+v on %d: %d %v, want %d", tt.fee, tt.amount, got, err, tt.want)
		}
	}
	for _, bad := range []Fee{{Flat: dec("-1")}, {Flat: dec("0.001")}, {Percent: dec("-0.1")}, {Percent: dec("100")}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestAmountReason(t *testing.T) {
	if r := amountReason(accounts.CriteriaNone, 100, 5, money.NGN); r != "" {
		t.Errorf("NONE rejected: %q", r)
	}
	r := amountReason(accounts.CriteriaNotEqual, 100_00, 99_99, money.NGN)
	if r != "the amount 99.99 NGN is less than the expected 100 NGN (reject_amount_criteria NOT_EQUAL)" {
		t.Errorf("reason %q", r)
	}
}

type fixture struct {
	db    *store.DB
	clock *clock.Fake
	acc   *accounts.Service
	l     *ledger.Service
	o     *events.Outbox
	ada   context.Context
}

func setup(t *testing.T, url string) *fixture {
	t.Helper()
	db := testdb.Open(t, url)
	c := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	dir, err := banks.Load()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := rails.NewSandbox(dir, c, rails.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := merchants.New(db, c).Create(context.Background(), "Ada Stores", "ops@example.com")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{db: db, clock: c, acc: accounts.New(db, c, sb, wallets.New(db, c)), l: ledger.New(db, c, rails.SimulationsInEveryMode),
		o:   events.New(db, c),
		ada: tenant.With(context.Background(), tenant.Tenant{MerchantID: m.MerchantID, Mode: tenant.Test})}
}

func (f *fixture) service(t *testing.T, cfg Config) *Service {
	t.Helper()
	s, err := New(f.db, f.clock, f.l, f.acc, f.o, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFeeAndSystemCaller books deposits with an operator fee, as the rails'
// webhook would (system context), and checks the postings.
func TestFeeAndSystemCaller(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		f := setup(t, url)
		s := f.service(t, Config{Fee: Fee{Flat: dec("10"), Percent: dec("1.5")}})
		acc, err := f.acc.CreateGlobal(f.ada, nil, accounts.CreateInput{}, "")
		if err != nil {
			t.Fatal(err)
		}
		sys := tenant.System(context.Background())

		// 1000 NGN: fee 10 + 15 = 25, the merchant gets 975.
		tx, err := s.Receive(sys, nil, Transfer{AccountNumber: acc.AccountNumber, Amount: dec("1000"), SenderName: "JOHN DOE"})
		if err != nil {
			t.Fatal(err)
		}
		if tx.Status != StatusSuccess || tx.Fee != 25_00 || tx.AmountSettled != 975_00 || tx.AmountCharged != 1000_00 ||
			tx.MerchantID != acc.MerchantID || tx.FromMerchant != "Ada Stores" || *tx.SenderName != "JOHN DOE" {
			t.Fatalf("deposit: %+v", tx)
		}
		entries, err := f.db.Reader().LedgerEntry.Query().Where(ledgerentry.TransactionRef(tx.Reference)).All(sys)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, e := range entries {
			got[e.AccountID] += e.Amount
		}
		ten := tenant.Tenant{MerchantID: acc.MerchantID, Mode: tenant.Test}
		want := map[string]int64{
			ledger.SystemAccount(tenant.Test, money.NGN, ledger.RailsClearing).ID(): -1000_00,
			ledger.MerchantAccount(ten, money.NGN).ID():                             975_00,
			ledger.SystemAccount(tenant.Test, money.NGN, ledger.Fees).ID():          25_00,
		}
		if len(got) != len(want) {
			t.Errorf("postings %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: %d, want %d", k, got[k], v)
			}
		}

		// An amount that does not cover the fee is refunded, fee-free.
		tx, err = s.Receive(sys, nil, Transfer{AccountNumber: acc.AccountNumber, Amount: dec("10.15")})
		if err != nil {
			t.Fatal(err)
		}
		if tx.Status != StatusRefunded || tx.Fee != 0 || tx.AmountSettled != 0 || !strings.Contains(*tx.RejectReason, "fee") {
			t.Fatalf("deposit below the fee: %+v", tx)
		}
		b, err := ledgertest.Balance(f.ada, f.l, money.NGN)
		if err != nil || b.Available != 975_00 {
			t.Fatalf("balance %+v %v", b, err)
		}
		if err := ledger.Check(context.Background(), f.db); err != nil {
			t.Fatal(err)
		}

		// A context with neither a tenant nor the system marker is refused;
		// an unknown account is NOT_FOUND; a bad transfer names its fields.
		if _, err := s.Receive(context.Background(), nil, Transfer{AccountNumber: acc.AccountNumber, Amount: dec("1")}); !errors.Is(err, tenant.ErrNoTenant) {
			t.Errorf("no tenant: %v", err)
		}
		if _, err := s.Receive(sys, nil, Transfer{AccountNumber: "0123456789", Amount: dec("1")}); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("unknown account: %v", err)
		}
		_, err = s.Receive(sys, nil, Transfer{AccountNumber: "1", Amount: dec("0")})
		if e := apperr.As(err); e.Kind != apperr.Validation || len(e.Fields) != 2 {
			t.Errorf("bad transfer: %v", err)
		}
	})
}

func TestNewRefusesBadFee(t *testing.T) {
	if _, err := New(nil, nil, nil, nil, nil, Config{Fee: Fee{Percent: dec("100")}}); err == nil {
		t.Error("a 100% fee was accepted")
	}
}
