package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/railsnotice"
	"merchantpay/ent/transaction"
	"merchantpay/internal/ledger"
	"merchantpay/internal/ledger/ledgertest"
	"merchantpay/internal/money"
	"merchantpay/internal/rails/binancepay"
	"merchantpay/internal/rails/binancepay/binancepayfake"
	"merchantpay/internal/rails/flutterwave"
	"merchantpay/internal/rails/flutterwave/flutterwavefake"
	"merchantpay/internal/rails/paystack"
	"merchantpay/internal/rails/paystack/paystackfake"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// liveFakes are the three providers' fakes on loopback, and the service's
// settings that point live mode at them.
type liveFakes struct {
	ps *paystackfake.Fake
	fw *flutterwavefake.Fake
	bp *binancepayfake.Fake
}

func startLiveFakes(t *testing.T) liveFakes {
	f := liveFakes{
		ps: paystackfake.New("sk_test_e2e_secret"),
		fw: flutterwavefake.Start("FLWSECK_TEST-e2e", "flw-e2e-hash"),
		bp: binancepayfake.Start("bnb-e2e-api-key", "bnb-e2e-secret"),
	}
	t.Cleanup(func() { f.ps.Close(); f.fw.Close(); f.bp.Close() })
	return f
}

func (f liveFakes) options(providers string) []servertest.Option {
	return []servertest.Option{
		servertest.With("LIVE_RAILS", providers),
		servertest.With("PAYSTACK_SECRET_KEY", "sk_test_e2e_secret"), servertest.With("PAYSTACK_BASE_URL", f.ps.URL()),
		servertest.With("PAYSTACK_DVA_BANK", "test-bank"),
		servertest.With("FLUTTERWAVE_SECRET_KEY", "FLWSECK_TEST-e2e"), servertest.With("FLUTTERWAVE_WEBHOOK_HASH", "flw-e2e-hash"),
		servertest.With("FLUTTERWAVE_BASE_URL", f.fw.URL()),
		servertest.With("BINANCEPAY_API_KEY", "bnb-e2e-api-key"), servertest.With("BINANCEPAY_SECRET_KEY", "bnb-e2e-secret"),
		servertest.With("BINANCEPAY_BASE_URL", f.bp.URL()),
		servertest.With("JOBS_POLL_INTERVAL", "20ms"), servertest.With("RAILS_RECONCILE_AFTER", "10m"),
		servertest.With("RAILS_TIMEOUT", "2s"),
	}
}

func liveTenantCtx(m servertest.Merchant) context.Context {
	return tenant.With(context.Background(), tenant.Tenant{MerchantID: m.ID, Mode: "live"})
}

func liveBalance(t *testing.T, e *servertest.Env, m servertest.Merchant, cur money.Currency) int64 {
	t.Helper()
	b, err := ledgertest.Balance(liveTenantCtx(m), e.App.Ledger, cur)
	if err != nil {
		t.Fatal(err)
	}
	return b.Available
}

func txByRef(t *testing.T, e *servertest.Env, ref string) *ent.Transaction {
	t.Helper()
	ctx := tenant.System(context.Background())
	row, err := e.App.DB.Reader().Transaction.Query().Where(transaction.Reference(ref)).Only(ctx)
	if err != nil {
		t.Fatalf("transaction %s: %v", ref, err)
	}
	return row
}

func noticeCount(t *testing.T, e *servertest.Env, outcome string) int {
	t.Helper()
	ctx := tenant.System(context.Background())
	n, err := e.App.DB.Reader().RailsNotice.Query().Where(railsnotice.Outcome(outcome)).Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func waitStatus(t *testing.T, e *servertest.Env, ref, status string) *ent.Transaction {
	t.Helper()
	var row *ent.Transaction
	servertest.Eventually(t, 10*time.Second, ref+" "+status, func() bool {
		row = txByRef(t, e, ref)
		return row.Status == status
	})
	return row
}

// TestLiveRailsEndToEnd runs live mode on the three providers' fakes: a
// Paystack virtual account's inflow, NG payouts (webhook success, reversal,
// reconciler after a missing webhook), a GH payout with its branch through
// Flutterwave, a crypto-pay deposit through Binance Pay; duplicate and
// forged webhooks; and test mode still on the sandbox.
func TestLiveRailsEndToEnd(t *testing.T) {
	f := startLiveFakes(t)
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Live Co")
		hook := func(p string) string { return e.URL + "/rails/" + p + "/webhook" }

		// Test mode is unchanged: sandbox accounts and simulations.
		testAcc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()
		depositTo(t, e, m.TestSecret, testAcc["account_number"].(string), "100")
		if n := len(f.ps.DedicatedAccounts()); n != 0 && testAcc["account_number"] == f.ps.DedicatedAccounts()[n-1].AccountNumber {
			t.Fatal("a test-mode account came from Paystack")
		}
		// Live keys lose the sandbox simulations.
		if r := e.REST("POST", "/sandbox/balances/fund", m.LiveSecret, map[string]any{"currency": "NGN", "amount": 100}); r.Status != 404 || r.Code() != "NOT_FOUND" {
			t.Fatalf("live sandbox funding: %d %s", r.Status, r.Body)
		}

		// A live wallet's account is Paystack's dedicated account.
		w := sampleWallet("live-w1")
		w["account"] = map[string]any{"account_type": "static", "currency": "NGN"}
		wr := e.REST("POST", "/wallets", m.LiveSecret, w).Expect(201)
		acc, _ := wr.Data()["account"].(map[string]any)
		if acc == nil {
			t.Fatalf("live wallet: %s", wr.Body)
		}
		number := acc["account_number"].(string)
		found := false
		for _, d := range f.ps.DedicatedAccounts() {
			found = found || d.AccountNumber == number && d.BankSlug == "test-bank"
		}
		if !found {
			t.Fatalf("live account %s is not one Paystack made at PAYSTACK_DVA_BANK: %v", number, f.ps.DedicatedAccounts())
		}
		// Live dynamic accounts have no provider.
		if r := e.REST("POST", "/wallets/live-w1", m.LiveSecret, map[string]any{"account_type": "dynamic", "currency": "NGN", "amount": 100, "expires_at": 30}); r.Status != 422 || r.Code() != "RAIL_NOT_CONFIGURED" {
			t.Fatalf("live dynamic account: %d %s", r.Status, r.Body)
		}

		// An inflow credits once, however often it is delivered.
		body, chargeRef, err := f.ps.InflowEvent(paystackfake.Inflow{AccountNumber: number, Amount: 5_000_000, Narration: "order 42", SenderName: "Ada Obi", SenderBank: "GTBank"})
		if err != nil {
			t.Fatal(err)
		}
		if d, err := f.ps.Post(context.Background(), hook("paystack"), body, paystack.Sign("sk_test_not_the_key", body)); err != nil || d.Status != 401 {
			t.Fatalf("forged inflow: %v %d %s", err, d.Status, d.Body)
		}
		if got := liveBalance(t, e, m, money.NGN); got != 0 {
			t.Fatalf("a forged inflow credited %d", got)
		}
		for i := 0; i < 2; i++ {
			if d, err := f.ps.Post(context.Background(), hook("paystack"), body, f.ps.Sign(body)); err != nil || d.Status != 200 {
				t.Fatalf("inflow delivery %d: %v %d %s", i, err, d.Status, d.Body)
			}
		}
		if got := liveBalance(t, e, m, money.NGN); got != 5_000_000 {
			t.Fatalf("NGN after the inflow delivered twice: %d, want 5000000", got)
		}
		if n, err := e.App.DB.Reader().RailsNotice.Query().
			Where(railsnotice.Reference(chargeRef)).Count(tenant.System(context.Background())); err != nil || n != 1 {
			t.Fatalf("the inflow delivered twice is recorded %d times (%v), want once", n, err)
		}
		ctx := tenant.System(context.Background())
		dep, err := e.App.DB.Reader().Transaction.Query().Where(transaction.ProviderReference(chargeRef)).Only(ctx)
		if err != nil || dep.Status != "success" || dep.Narration != "order 42" {
			t.Fatalf("inflow's deposit: %v %+v", err, dep)
		}
		// An inflow into an account we do not know is acknowledged and credits nobody.
		if d, _, err := f.ps.SendInflow(context.Background(), hook("paystack"), paystackfake.Inflow{AccountNumber: "9999999999", Amount: 100_000}); err != nil || d.Status != 200 {
			t.Fatalf("inflow to an unknown account: %v %d", err, d.Status)
		}
		if n := noticeCount(t, e, "unknown_account"); n != 1 {
			t.Fatalf("unknown-account notices: %d", n)
		}

		// NG payout through Paystack, settled by its webhook, then reversed.
		f.ps.AddAccount("058", "0123456789", "Ada Obi")
		ng := map[string]any{"amount": 1000, "currency": "NGN",
			"beneficiary": map[string]any{"email": "ada@example.com", "bank": "058", "account_name": "Ada Obi", "account_number": "0123456789"}}
		ref := e.REST("POST", "/transactions/withdraw", m.LiveSecret, ng).Expect(200).Data()["reference"].(string)
		charged := txByRef(t, e, ref).AmountCharged
		pref := paystack.ProviderReference(ref)
		servertest.Eventually(t, 10*time.Second, "the payout submitted to Paystack", func() bool { _, ok := f.ps.Transfer(pref); return ok })
		if row := txByRef(t, e, ref); row.ProviderReference == nil || *row.ProviderReference != pref || row.Provider == nil || *row.Provider != "paystack" {
			t.Fatalf("payout's provider mapping: %+v", row)
		}
		if err := f.ps.Settle(pref); err != nil {
			t.Fatal(err)
		}
		if d, err := f.ps.SendTransferEvent(context.Background(), hook("paystack"), pref); err != nil || d.Status != 200 {
			t.Fatalf("transfer.success: %v %d %s", err, d.Status, d.Body)
		}
		waitStatus(t, e, ref, "success")
		if got := liveBalance(t, e, m, money.NGN); got != 5_000_000-charged {
			t.Fatalf("NGN after the payout: %d", got)
		}
		if err := f.ps.Reverse(pref); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ { // the reversal's repeat changes nothing
			if d, err := f.ps.SendTransferEvent(context.Background(), hook("paystack"), pref); err != nil || d.Status != 200 {
				t.Fatalf("transfer.reversed: %v %d %s", err, d.Status, d.Body)
			}
		}
		rev := waitStatus(t, e, ref, "failed")
		if rev.RejectReason == nil || *rev.RejectReason == "" {
			t.Errorf("reversed payout without a reason: %+v", rev)
		}
		if got := liveBalance(t, e, m, money.NGN); got != 5_000_000 {
			t.Fatalf("NGN after the reversal: %d, want 5000000", got)
		}
		evs := e.REST("GET", "/transactions/"+ref, m.LiveSecret, nil).Expect(200).Data()
		if evs["status"] != "failed" {
			t.Errorf("GET reversed payout: %v", evs)
		}

		// A payout whose webhook never comes is looked up after RAILS_RECONCILE_AFTER.
		ref2 := e.REST("POST", "/transactions/withdraw", m.LiveSecret, ng).Expect(200).Data()["reference"].(string)
		pref2 := paystack.ProviderReference(ref2)
		servertest.Eventually(t, 10*time.Second, "the second payout submitted", func() bool {
			row := txByRef(t, e, ref2)
			return row.SubmittedAt != nil
		})
		if err := f.ps.Settle(pref2); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		if row := txByRef(t, e, ref2); row.Status != "pending" {
			t.Fatalf("settled before the reconcile delay: %s", row.Status)
		}
		e.Clock.Advance(11 * time.Minute)
		waitStatus(t, e, ref2, "success")

		// GH payout through Flutterwave, with the beneficiary's branch.
		gh := parityGhanaBank(t, e)
		if _, err := e.App.Ledger.Credit(liveTenantCtx(m), nil, ledger.Posting{Memo: "test funding"},
			tenant.Tenant{MerchantID: m.ID, Mode: "live"}, ledger.RailsClearing, money.GHS, 1_000_000); err != nil {
			t.Fatal(err)
		}
		ghRef := e.REST("POST", "/transactions/withdraw", m.LiveSecret, map[string]any{"amount": 250.5, "currency": "GHS",
			"beneficiary": map[string]any{"email": "kofi@example.com", "country": "GH", "bank": gh.bank, "branch": gh.branch,
				"account_name": "Kofi Mensah", "account_number": "1234567890123", "account_type": "individual"}}).Expect(200).Data()["reference"].(string)
		fref := flutterwave.ProviderReference(ghRef)
		var tr flutterwavefake.Transfer
		servertest.Eventually(t, 10*time.Second, "the GH payout submitted to Flutterwave", func() bool {
			var ok bool
			tr, ok = f.fw.Transfer(fref)
			return ok
		})
		if tr.DestinationBranchCode != gh.branch || tr.Amount.String() != "250.5" && tr.Amount.String() != "250.50" || tr.Currency != "GHS" {
			t.Fatalf("Flutterwave transfer: %+v (branch %s)", tr, gh.branch)
		}
		if err := f.fw.Complete(fref, "SUCCESSFUL", ""); err != nil {
			t.Fatal(err)
		}
		if status, b, err := f.fw.SendWebhook(context.Background(), hook("flutterwave"), fref); err != nil || status != 200 {
			t.Fatalf("transfer.completed: %v %d %s", err, status, b)
		}
		waitStatus(t, e, ghRef, "success")

		// Crypto-pay at Binance Pay: Binance's checkout, completed by its webhook.
		e.GQL(m.LiveSecret, `mutation { enrolCryptoPay(input: {businessName: "Live Co", logoUrl: "https://a.example/l.png", website: "https://a.example", successUrl: "https://a.example/ok", failureUrl: "https://a.example/ko"}) { status } }`, nil).GQLData()
		links := startDep(e, m.LiveSecret, directBody("Mug", "12.5", "USDT")).Expect(200).Data()
		if u, _ := links["checkoutUrl"].(string); u == "" || strings.HasPrefix(u, e.URL) {
			t.Fatalf("live checkout is not Binance's: %v", links)
		}
		var depRef string
		orders := f.bp.Orders()
		order := orders[len(orders)-1]
		if order.Amount != "12.5" || order.Currency != "USDT" || order.PrepayID != links["prepayId"] {
			t.Fatalf("Binance order %+v for links %v", order, links)
		}
		row, err := e.App.DB.Reader().Transaction.Query().Where(transaction.PrepayID(order.PrepayID)).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		depRef = row.Reference
		if order.MerchantTradeNo != binancepay.TradeNo(depRef) {
			t.Fatalf("trade number %s for %s", order.MerchantTradeNo, depRef)
		}
		if err := f.bp.Pay(order.MerchantTradeNo); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if status, b, err := f.bp.SendWebhook(context.Background(), hook("binancepay"), order.MerchantTradeNo, "PAY_SUCCESS"); err != nil || status != 200 {
				t.Fatalf("PAY_SUCCESS: %v %d %s", err, status, b)
			}
		}
		waitStatus(t, e, depRef, "success")
		if got := liveBalance(t, e, m, "USDT"); got != row.AmountSettled {
			t.Fatalf("USDT after the paid order: %d, want %d", got, row.AmountSettled)
		}
		// A forged Binance webhook is refused.
		b, _ := f.bp.WebhookBody(order.MerchantTradeNo, "PAY_CLOSED")
		h := f.bp.SignWebhook(b, time.Now())
		req, _ := http.NewRequest(http.MethodPost, hook("binancepay"), strings.NewReader(string(b)+" "))
		req.Header = h
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
			t.Fatalf("forged Binance webhook: %v %v", err, resp)
		} else {
			resp.Body.Close()
		}

		if err := ledger.Check(context.Background(), e.App.DB); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
		for _, want := range [][2]string{{"paystack", "bad_signature"}, {"paystack", "duplicate"}, {"paystack", "processed"}, {"binancepay", "bad_signature"}} {
			if n := webhookCount(t, e, want[0], want[1]); n < 1 {
				t.Errorf("rails_webhooks_total{provider=%q,outcome=%q} = %v", want[0], want[1], n)
			}
		}
		if got := indexRails(t, e); got["test"] != "sandbox" || got["live"] != "binancepay,flutterwave,paystack" {
			t.Errorf("GET / rails: %v", got)
		}
	}, f.options("paystack,flutterwave,binancepay")...)
}

// webhookCount reads rails_webhooks_total{provider,outcome}.
func webhookCount(t *testing.T, e *servertest.Env, provider, outcome string) float64 {
	t.Helper()
	mfs, err := e.App.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "rails_webhooks_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["provider"] == provider && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// indexRails reads what GET / says each mode runs on.
func indexRails(t *testing.T, e *servertest.Env) map[string]any {
	t.Helper()
	resp, err := http.Get(e.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var idx struct {
		Rails map[string]any `json:"rails"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&idx); err != nil {
		t.Fatal(err)
	}
	return idx.Rails
}

// TestLiveOnTheSandbox: with LIVE_RAILS unset, live mode runs on the
// sandbox as before, says so on GET /, and keeps the simulations.
func TestLiveOnTheSandbox(t *testing.T) {
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	if got := indexRails(t, e); got["test"] != "sandbox" || got["live"] != "sandbox" {
		t.Errorf("GET / rails: %v", got)
	}
	m := e.Merchant("Demo Co")
	e.REST("POST", "/sandbox/balances/fund", m.LiveSecret, map[string]any{"currency": "NGN", "amount": 100}).Expect(200)
	e.REST("POST", "/wallets", m.LiveSecret, sampleWallet("demo-w")).Expect(201)
	e.REST("POST", "/wallets/demo-w", m.LiveSecret, map[string]any{"account_type": "dynamic", "currency": "NGN", "amount": 100, "expires_at": 30}).Expect(201)
}

// TestLiveRailNotConfigured: live operations whose provider LIVE_RAILS
// leaves out answer 422 RAIL_NOT_CONFIGURED and change nothing.
func TestLiveRailNotConfigured(t *testing.T) {
	f := startLiveFakes(t)
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Half Live")
		if _, err := e.App.Ledger.Credit(liveTenantCtx(m), nil, ledger.Posting{Memo: "test funding"},
			tenant.Tenant{MerchantID: m.ID, Mode: "live"}, ledger.RailsClearing, money.GHS, 1_000_000); err != nil {
			t.Fatal(err)
		}
		gh := parityGhanaBank(t, e)
		r := e.REST("POST", "/transactions/withdraw", m.LiveSecret, map[string]any{"amount": 10, "currency": "GHS",
			"beneficiary": map[string]any{"email": "kofi@example.com", "country": "GH", "bank": gh.bank, "branch": gh.branch,
				"account_name": "Kofi Mensah", "account_number": "1234567890123", "account_type": "individual"}})
		if r.Status != 422 || r.Code() != "RAIL_NOT_CONFIGURED" {
			t.Fatalf("GH payout without flutterwave: %d %s", r.Status, r.Body)
		}
		gq := e.GQL(m.LiveSecret, `mutation($in: WithdrawInput!) { withdraw(input: $in) { reference } }`, map[string]any{"in": map[string]any{
			"amount": "10", "currency": "GHS", "beneficiary": parityGHBeneficiary(gh)}})
		if gq.Code() != "RAIL_NOT_CONFIGURED" {
			t.Fatalf("GraphQL GH payout without flutterwave: %s", gq.Body)
		}
		if got := liveBalance(t, e, m, money.GHS); got != 1_000_000 {
			t.Fatalf("GHS after the refusal: %d", got)
		}
		e.GQL(m.LiveSecret, `mutation { enrolCryptoPay(input: {businessName: "Half", logoUrl: "https://a.example/l.png", website: "https://a.example", successUrl: "https://a.example/ok", failureUrl: "https://a.example/ko"}) { status } }`, nil).GQLData()
		if r := startDep(e, m.LiveSecret, directBody("Mug", "1", "USDT")); r.Status != 422 || r.Code() != "RAIL_NOT_CONFIGURED" {
			t.Fatalf("crypto-pay without binancepay: %d %s", r.Status, r.Body)
		}
		// The same GH payout in test mode still runs on the sandbox.
		e.REST("POST", "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "GHS", "amount": 100}).Expect(200)
		e.REST("POST", "/transactions/withdraw", m.TestSecret, map[string]any{"amount": 10, "currency": "GHS",
			"beneficiary": map[string]any{"email": "kofi@example.com", "country": "GH", "bank": gh.bank, "branch": gh.branch,
				"account_name": "Kofi Mensah", "account_number": "1234567890123", "account_type": "individual"}}).Expect(200)
	}, f.options("paystack")...)
}
