package transactions_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/apperr"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/internal/transactions"
	"merchantpay/present/txview"
)

var (
	acme     = tenant.Tenant{MerchantID: "m-acme", Mode: tenant.Test}
	acmeLive = tenant.Tenant{MerchantID: "m-acme", Mode: tenant.Live}
	other    = tenant.Tenant{MerchantID: "m-other", Mode: tenant.Test}
)

// create inserts a transaction of tn with every field the shape shows set
// to a value of its own.
func create(t *testing.T, c *ent.Client, tn tenant.Tenant, id, ref, merchantRef string) *ent.Transaction {
	t.Helper()
	ctx := tenant.With(context.Background(), tn)
	at := time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	row, err := c.Transaction.Create().SetID(id).SetReference(ref).
		SetMerchantReference(merchantRef).SetMerchantReferenceKey(transactions.ReferenceKey(merchantRef)).
		SetType("SWAP").SetPurpose("SWAP").SetStatus("success").
		SetFromAmount(1000050).SetFromCurrency("NGN").SetAmount(250).SetCurrency("USDT").
		SetAmountCharged(1001125).SetAmountSettled(240).SetToAmount(245).SetToCurrency("USDT").
		SetFee(1075).SetFeeCurrency("NGN").SetTrxRate(decimal.RequireFromString("1600.125")).SetRateID("rate-1").
		SetFromParty("SELF").SetToParty("SELF").SetChannel("DASHBOARD").SetNarration("n " + id).
		SetBeneficiary(`{"bank":"058"}`).SetFeeBearer("customer").SetDestination("wallet").
		SetPaymentSlug("swap").SetFromMerchant("Acme Pay").SetToMerchant("Acme Pay 2").
		SetSettledAt(at.Add(time.Minute)).SetSettlementTime("T+0").SetSettlementDate(at.Add(24 * time.Hour)).
		SetRejectReason("none").SetTraceID("trace-1").SetPaymentProof("proof-1").
		SetWalletReference("wal-1").SetAccountReference("acc-1").
		SetCreatedAt(at).SetUpdatedAt(at.Add(2 * time.Second)).Save(ctx)
	if err != nil {
		t.Fatalf("create %s: %v", id, err)
	}
	return row
}

// TestGet: the look-up renders the row as txview.View renders the entity
// ent loads, finds it by the service's reference first and then by the
// merchant's (without regard to case), and never across tenants or modes.
func TestGet(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		c := db.Reader()
		s := transactions.New(db)
		create(t, c, acme, "t1", "WTH-1", "Order-1")
		// A merchant reference equal to another transaction's service
		// reference: the service's reference wins.
		create(t, c, acme, "t2", "WTH-2", "WTH-1")
		create(t, c, other, "t3", "WTH-3", "Order-3")
		create(t, c, acmeLive, "t4", "WTH-4", "Order-4")
		// Every optional column left NULL.
		if err := c.Transaction.Create().SetID("t6").SetReference("DEP-6").SetType("DEPOSIT").SetPurpose("DEPOSIT").
			SetStatus("pending").SetFromAmount(1).SetFromCurrency("NGN").SetAmount(1).SetCurrency("NGN").
			SetAmountCharged(1).SetAmountSettled(1).SetPaymentSlug("bank").
			SetCreatedAt(time.Now()).SetUpdatedAt(time.Now()).Exec(tenant.With(context.Background(), acme)); err != nil {
			t.Fatal(err)
		}

		ctx := tenant.With(context.Background(), acme)
		loaded := func(id string) txview.Transaction {
			t.Helper()
			row, err := c.Transaction.Query().Where(transaction.ID(id)).Only(tenant.System(context.Background()))
			if err != nil {
				t.Fatal(err)
			}
			return txview.View(row)
		}
		for _, tc := range []struct{ ref, id string }{
			{"WTH-1", "t1"}, {"order-1", "t1"}, {"ORDER-1", "t1"}, {"WTH-2", "t2"}, {"DEP-6", "t6"},
		} {
			got, err := s.Get(ctx, nil, tc.ref)
			if err != nil {
				t.Fatalf("Get(%q): %v", tc.ref, err)
			}
			if want := loaded(tc.id); !reflect.DeepEqual(got, want) {
				t.Fatalf("Get(%q):\n%+v\nwant\n%+v", tc.ref, got, want)
			}
		}
		for _, ref := range []string{"WTH-3", "Order-3", "WTH-4", "order-4", "", "nope", string(make([]byte, 201))} {
			if _, err := s.Get(ctx, nil, ref); !apperr.Is(err, apperr.NotFound) {
				t.Fatalf("Get(%q) from another tenant or mode: %v, want NOT_FOUND", ref, err)
			}
		}
		if _, err := s.Get(tenant.System(context.Background()), nil, "WTH-1"); err == nil {
			t.Fatal("Get without a tenant succeeded")
		}
		// Inside a transaction the look-up sees its uncommitted rows.
		ctx, tx, err := db.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		create(t, tx.Client(), acme, "t5", "WTH-5", "Order-5")
		if _, err := s.Get(ctx, tx, "order-5"); err != nil {
			t.Fatalf("Get in a transaction: %v", err)
		}
	})
}
