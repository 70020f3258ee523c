package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"merchantpay/ent/railsnotice"
	"merchantpay/ent/transaction"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/binancepay"
	"merchantpay/internal/rails/paystack"
	"merchantpay/internal/rails/paystack/paystackfake"
	"merchantpay/internal/tenant"
	"merchantpay/server/servertest"
)

// fundLiveNGN books an inflow into a new live account of m through
// Paystack's webhook, the only way live money arrives.
func fundLiveNGN(t *testing.T, e *servertest.Env, f liveFakes, m servertest.Merchant, kobo int64) {
	t.Helper()
	number := e.REST("POST", "/accounts", m.LiveSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
	if d, _, err := f.ps.SendInflow(context.Background(), e.URL+"/rails/paystack/webhook", paystackfake.Inflow{AccountNumber: number, Amount: kobo}); err != nil || d.Status != 200 {
		t.Fatalf("funding inflow: %v %d %s", err, d.Status, d.Body)
	}
}

// TestLiveRailsProviderFaults: a payout whose submission timed out is looked
// up, not submitted again; an amount that disagrees is flagged, not
// settled; a checkout past its expiry is asked about and closed at Binance;
// name enquiry and GraphQL's account creation go to Paystack.
func TestLiveRailsProviderFaults(t *testing.T) {
	f := startLiveFakes(t)
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Faulty Co")
		ctx := tenant.System(context.Background())
		fundLiveNGN(t, e, f, m, 10_000_000)
		f.ps.AddAccount("058", "0123456789", "Ada Obi")

		// Name enquiry in live mode is Paystack's.
		res := e.REST("POST", "/misc/banks/resolve", m.LiveSecret, map[string]any{"bank": "058", "account": "0123456789"}).Expect(200).Data()
		if res["account_name"] != "Ada Obi" {
			t.Fatalf("live name enquiry: %v", res)
		}
		gr := e.GQL(m.LiveSecret, `mutation { resolveBankAccount(input: {bank: "058", account: "0123456789"}) { accountName } }`, nil).GQLData()
		if gr["resolveBankAccount"].(map[string]any)["accountName"] != "Ada Obi" {
			t.Fatalf("live GraphQL name enquiry: %v", gr)
		}
		// GraphQL's account creation asks Paystack too, outside a request transaction.
		g := e.GQL(m.LiveSecret, `mutation { createFiatAccount(input: {account: {accountType: STATIC_DYNAMIC, currency: "NGN"}}) { accountNumber } }`, nil).GQLData()
		number := g["createFiatAccount"].(map[string]any)["accountNumber"].(string)
		found := false
		for _, d := range f.ps.DedicatedAccounts() {
			found = found || d.AccountNumber == number
		}
		if !found {
			t.Fatalf("GraphQL live account %s is not Paystack's", number)
		}

		// A keyed account creation replayed answers from its stored
		// response: Paystack is not asked again.
		asked := len(f.ps.RequestsTo(http.MethodPost, "/dedicated_account"))
		first := e.REST("POST", "/accounts", m.LiveSecret, map[string]any{"account_type": "static_dynamic"}, "Idempotency-Key", "acct-once").Expect(201)
		again := e.REST("POST", "/accounts", m.LiveSecret, map[string]any{"account_type": "static_dynamic"}, "Idempotency-Key", "acct-once").Expect(201)
		if string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replayed live account: %s / %s", first.Body, again.Body)
		}
		if n := len(f.ps.RequestsTo(http.MethodPost, "/dedicated_account")) - asked; n != 1 {
			t.Fatalf("Paystack asked %d times for one keyed account", n)
		}

		// A transfer Paystack fails is refunded, with its reason.
		ng0 := map[string]any{"amount": 700, "currency": "NGN",
			"beneficiary": map[string]any{"email": "ada@example.com", "bank": "058", "account_name": "Ada Obi", "account_number": "0123456789"}}
		fref := e.REST("POST", "/transactions/withdraw", m.LiveSecret, ng0).Expect(200).Data()["reference"].(string)
		fpref := paystack.ProviderReference(fref)
		servertest.Eventually(t, 10*time.Second, "the payout submitted", func() bool { _, ok := f.ps.Transfer(fpref); return ok })
		if err := f.ps.Fail(fpref, "Account is dormant"); err != nil {
			t.Fatal(err)
		}
		if d, err := f.ps.SendTransferEvent(context.Background(), e.URL+"/rails/paystack/webhook", fpref); err != nil || d.Status != 200 {
			t.Fatalf("transfer.failed: %v %d", err, d.Status)
		}
		fr := waitStatus(t, e, fref, "failed")
		if fr.RejectReason == nil || *fr.RejectReason == "" {
			t.Errorf("failed payout without a reason: %+v", fr)
		}
		if got := liveBalance(t, e, m, money.NGN); got != 10_000_000 {
			t.Fatalf("NGN after the failed payout: %d, want 10000000", got)
		}

		// The transfer is made but its answer times out: the retry looks it
		// up and finds it, so Paystack holds one transfer, not two.
		before := f.ps.TransferCount()
		f.ps.FailNext(http.MethodPost, "/transfer", paystackfake.Timeout, true)
		ng := map[string]any{"amount": 1000, "currency": "NGN",
			"beneficiary": map[string]any{"email": "ada@example.com", "bank": "058", "account_name": "Ada Obi", "account_number": "0123456789"}}
		ref := e.REST("POST", "/transactions/withdraw", m.LiveSecret, ng).Expect(200).Data()["reference"].(string)
		servertest.Eventually(t, 10*time.Second, "the timed-out submission given back for a retry", func() bool {
			return txByRef(t, e, ref).Attempts > 0
		})
		if row := txByRef(t, e, ref); row.SubmittedAt != nil || row.Status != "pending" {
			t.Fatalf("after the timeout: %+v", row)
		}
		e.Clock.Advance(time.Minute) // past the retry's backoff
		servertest.Eventually(t, 10*time.Second, "the payout recorded as submitted", func() bool {
			return txByRef(t, e, ref).SubmittedAt != nil
		})
		if n := f.ps.TransferCount() - before; n != 1 {
			t.Fatalf("Paystack holds %d transfers for one payout", n)
		}

		// A provider amount one kobo off is flagged, not settled.
		row := txByRef(t, e, ref)
		pref := paystack.ProviderReference(ref)
		dup, err := e.App.RailNotices.Process(context.Background(), rails.ProviderPaystack, rails.Notice{Key: "transfer.success:" + pref,
			Payout: &rails.PayoutNotice{ProviderReference: pref, Status: rails.PayoutSucceeded, Amount: row.AmountSettled - 1, Currency: money.NGN}}, []byte("{}"))
		if err != nil || dup {
			t.Fatalf("mismatched notice: %v %v", err, dup)
		}
		row = txByRef(t, e, ref)
		if row.Status != "pending" || row.RailsFlag == nil || !strings.Contains(*row.RailsFlag, "amount mismatch") || row.NextRunAt != nil {
			t.Fatalf("mismatched payout: status %s flag %v next %v", row.Status, row.RailsFlag, row.NextRunAt)
		}
		if n, _ := e.App.DB.Reader().RailsNotice.Query().Where(railsnotice.Outcome("flagged")).Count(ctx); n != 1 {
			t.Fatalf("flagged notices: %d", n)
		}

		// A live checkout past its expiry: Binance is asked, the order closed, the deposit failed.
		e.GQL(m.LiveSecret, `mutation { enrolCryptoPay(input: {businessName: "Faulty", logoUrl: "https://a.example/l.png", website: "https://a.example", successUrl: "https://a.example/ok", failureUrl: "https://a.example/ko"}) { status } }`, nil).GQLData()
		links := startDep(e, m.LiveSecret, directBody("Mug", "3", "USDT")).Expect(200).Data()
		dep, err := e.App.DB.Reader().Transaction.Query().Where(transaction.PrepayID(links["prepayId"].(string))).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tradeNo := binancepay.TradeNo(dep.Reference)
		e.Clock.Advance(2 * time.Hour)
		failed := waitStatus(t, e, dep.Reference, "failed")
		if o, ok := f.bp.Order(tradeNo); !ok || o.Status != "CANCELED" {
			t.Fatalf("Binance order after expiry: %+v", o)
		}
		if failed.RejectReason == nil || !strings.Contains(*failed.RejectReason, "expired") {
			t.Errorf("expired checkout's reason: %v", failed.RejectReason)
		}

		if err := ledger.Check(context.Background(), e.App.DB); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
	}, f.options("paystack,flutterwave,binancepay")...)
}
