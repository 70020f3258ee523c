package server_test

import (
	"context"
	"testing"

	"merchantpay/ent/railsnotice"
	"merchantpay/ent/transaction"
	"merchantpay/internal/money"
	"merchantpay/internal/rails/paystack/paystackfake"
	"merchantpay/internal/tenant"
	"merchantpay/server/servertest"
)

// logged reports whether the service logged a line at level whose attr
// key has value want.
func logged(e *servertest.Env, level, key, want string) bool {
	for _, l := range e.Logs.Lines() {
		if l["level"] == level && l[key] == want {
			return true
		}
	}
	return false
}

// TestLiveInflowsAreNeverFalselyRefunded: Paystack cannot send an inflow
// back, so an inflow whose narration names a reference already taken is
// credited without it (a WARN says why), never booked "refunded"; an
// inflow in another currency is acknowledged, credits nobody and is kept,
// flagged, for an operator instead of being refused for redelivery.
func TestLiveInflowsAreNeverFalselyRefunded(t *testing.T) {
	f := startLiveFakes(t)
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Inflow Co")
		ctx := tenant.System(context.Background())
		hook := e.URL + "/rails/paystack/webhook"
		number := e.REST("POST", "/accounts", m.LiveSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)

		if d, _, err := f.ps.SendInflow(context.Background(), hook, paystackfake.Inflow{AccountNumber: number, Amount: 100_000, Narration: "pay !!inv-77!!"}); err != nil || d.Status != 200 {
			t.Fatalf("first inflow: %v %d %s", err, d.Status, d.Body)
		}
		d, ref2, err := f.ps.SendInflow(context.Background(), hook, paystackfake.Inflow{AccountNumber: number, Amount: 250_000, Narration: "again !!inv-77!!"})
		if err != nil || d.Status != 200 {
			t.Fatalf("second inflow: %v %d %s", err, d.Status, d.Body)
		}
		dep, err := e.App.DB.Reader().Transaction.Query().Where(transaction.ProviderReference(ref2)).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if dep.Status != "success" || dep.MerchantReference != nil || dep.RejectReason != nil || dep.Narration != "again !!inv-77!!" || dep.AmountSettled != 250_000 {
			t.Fatalf("inflow under a taken reference: %+v", dep)
		}
		got := e.REST("GET", "/transactions/"+dep.Reference, m.LiveSecret, nil).Expect(200).Data()
		if got["status"] != "success" {
			t.Fatalf("the merchant sees %v", got)
		}
		if b := liveBalance(t, e, m, money.NGN); b != 350_000 {
			t.Fatalf("NGN after two inflows: %d, want 350000", b)
		}
		if !logged(e, "WARN", "provider_reference", ref2) {
			t.Error("no WARN line names the inflow whose reference was dropped")
		}

		// Money in GHS into an NGN account: 200, nobody credited, kept.
		d, ref3, err := f.ps.SendInflow(context.Background(), hook, paystackfake.Inflow{AccountNumber: number, Amount: 5_000, Currency: "GHS"})
		if err != nil || d.Status != 200 {
			t.Fatalf("GHS inflow: %v %d %s", err, d.Status, d.Body)
		}
		n, err := e.App.DB.Reader().RailsNotice.Query().Where(railsnotice.Reference(ref3)).Only(ctx)
		if err != nil || n.Outcome != "flagged" || n.Body == "" {
			t.Fatalf("GHS inflow's notice: %+v %v", n, err)
		}
		if b := liveBalance(t, e, m, money.NGN); b != 350_000 {
			t.Fatalf("NGN after a GHS inflow: %d, want 350000", b)
		}
		if exists, err := e.App.DB.Reader().Transaction.Query().Where(transaction.ProviderReference(ref3)).Exist(ctx); err != nil || exists {
			t.Fatalf("a GHS inflow booked a deposit (%v)", err)
		}
		if !logged(e, "ERROR", "provider_reference", ref3) {
			t.Error("no ERROR line names the GHS inflow")
		}
	}, append(f.options("paystack,flutterwave,binancepay"), servertest.CaptureLogs())...)
}
