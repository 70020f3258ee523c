package withdrawals_test

import (
	"context"
	"testing"
	"time"

	"merchantpay/ent/transaction"
	"merchantpay/internal/jobs"
	"merchantpay/internal/rails/paystack/paystackfake"
	"merchantpay/internal/tenant"
	"merchantpay/internal/withdrawals"
	"merchantpay/server/servertest"
)

// TestLivePayoutTakenOverIsNotSubmitted: a worker whose lease on a live
// payout passed to another owner (its batch ran long) does not submit it:
// storing the provider's reference, which renews the lease, finds the
// payout no longer its own, and Paystack is never called.
func TestLivePayoutTakenOverIsNotSubmitted(t *testing.T) {
	ps := paystackfake.New("sk_test_takeover")
	t.Cleanup(ps.Close)
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Takeover Co")
		number := e.REST("POST", "/accounts", m.LiveSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		if d, _, err := ps.SendInflow(context.Background(), e.URL+"/rails/paystack/webhook", paystackfake.Inflow{AccountNumber: number, Amount: 1_000_000}); err != nil || d.Status != 200 {
			t.Fatalf("funding inflow: %v %d", err, d.Status)
		}
		ps.AddAccount("058", "0123456789", "Ada Obi")
		ref := e.REST("POST", "/transactions/withdraw", m.LiveSecret, map[string]any{"amount": 100, "currency": "NGN",
			"beneficiary": map[string]any{"email": "ada@example.com", "bank": "058", "account_name": "Ada Obi", "account_number": "0123456789"}}).
			Expect(200).Data()["reference"].(string)
		ctx := tenant.System(context.Background())
		before := ps.TransferCount()
		claimed, err := jobs.Claim(ctx, e.App.DB, "slow", e.Clock.Now(), time.Minute, 10, transaction.Reference(ref))
		if err != nil || len(claimed) != 1 {
			t.Fatalf("claimed %d: %v", len(claimed), err)
		}
		if err := e.App.DB.Reader().Transaction.UpdateOneID(claimed[0].ID).SetLeaseOwner("other").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		slow := e.App.Withdrawals.Payouts(withdrawals.PayoutOptions{WorkerOptions: jobs.WorkerOptions{Owner: "slow"}})
		if err := slow.Ask(context.Background(), claimed[0]); err == nil {
			t.Fatal("a payout no longer ours was asked about")
		}
		if n := ps.TransferCount() - before; n != 0 {
			t.Fatalf("Paystack holds %d transfers: a payout taken over was submitted", n)
		}
		// Its owner submits it.
		mine := e.App.Withdrawals.Payouts(withdrawals.PayoutOptions{WorkerOptions: jobs.WorkerOptions{Owner: "other"}})
		if err := mine.Ask(context.Background(), claimed[0]); err != nil {
			t.Fatal(err)
		}
		if n := ps.TransferCount() - before; n != 1 {
			t.Fatalf("Paystack holds %d transfers after the owner's submission", n)
		}
	}, servertest.WithoutWorkers(), servertest.With("LIVE_RAILS", "paystack"), servertest.With("PAYSTACK_SECRET_KEY", "sk_test_takeover"),
		servertest.With("PAYSTACK_BASE_URL", ps.URL()))
}
