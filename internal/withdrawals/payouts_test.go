package withdrawals_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/transaction"
	"merchantpay/internal/jobs"
	"merchantpay/internal/ledger"
	"merchantpay/internal/rails"
	"merchantpay/internal/tenant"
	"merchantpay/present/txview"
	"merchantpay/server/servertest"
)

// TestSucceedAllBatch settles a batch of payouts in one transaction, one of
// which another worker has taken over in the meantime: the others move to
// success with one event and one settling posting each, exactly as a fresh
// read of their rows shows them; the taken one is left alone.
func TestSucceedAllBatch(t *testing.T) {
	// The service's own worker submits on the wake-up of each withdrawal and
	// then sleeps for an hour: the settling below is this test's alone.
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Batch Co")
		bank := e.REST("GET", "/misc/banks?country=NG", m.TestSecret, nil).Expect(200).List()[0].(map[string]any)["code"]
		e.REST("POST", "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "NGN", "amount": 100000}).Expect(200)
		var refs []string
		for i, amount := range []string{"1000.01", "2000.02", "3000.03"} {
			body := map[string]any{"amount": json.Number(amount), "currency": "NGN",
				"beneficiary": map[string]any{"email": "ada.obi@example.com", "bank": bank,
					"account_name": "Ada Obi", "account_number": "012345678" + string(rune('0'+i))}}
			if i == 2 {
				body["fee_bearer"] = "beneficiary"
			}
			refs = append(refs, e.REST("POST", "/transactions/withdraw", m.TestSecret, body).Expect(200).Data()["reference"].(string))
		}
		ctx := tenant.System(context.Background())
		c := e.App.DB.Reader()
		servertest.Eventually(t, 30*time.Second, "the payouts to be submitted", func() bool {
			n, err := c.Transaction.Query().Where(transaction.ReferenceIn(refs...), transaction.SubmittedAtIsNil()).Count(ctx)
			return err == nil && n == 0
		})
		// Submitted and still held by the rails (recorded together on
		// PostgreSQL): the rails' reference kept, the lease given back, the
		// next look due when the rails said.
		submitted, err := c.Transaction.Query().Where(transaction.ReferenceIn(refs...)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range submitted {
			if tx.RailsReference == nil || *tx.RailsReference == "" || tx.LeaseOwner != nil || tx.LeaseUntil != nil ||
				tx.NextRunAt == nil || !tx.NextRunAt.After(*tx.SubmittedAt) || tx.Status != "pending" {
				t.Errorf("%s after submission: rails %v, lease %v/%v, next %v, submitted %v, status %s", tx.Reference,
					tx.RailsReference, tx.LeaseOwner, tx.LeaseUntil, tx.NextRunAt, tx.SubmittedAt, tx.Status)
			}
		}
		// A wake-up of the service's worker still pending could claim them
		// first once they are due: from here on the test alone settles.
		e.StopWorkers()
		e.Clock.Advance(3 * time.Second)
		now := e.Clock.Now()
		claimed, err := jobs.Claim(ctx, e.App.DB, "probe", now, time.Minute, 10, transaction.ReferenceIn(refs...))
		if err != nil || len(claimed) != 3 {
			t.Fatalf("claimed %d: %v", len(claimed), err)
		}
		byRef := map[string]*ent.Transaction{}
		for _, tx := range claimed {
			byRef[tx.Reference] = tx
		}
		// Another worker took the second one over.
		if err := c.Transaction.UpdateOneID(byRef[refs[1]].ID).SetLeaseOwner("other").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		var batch []*ent.Transaction
		var res []rails.PayoutResult
		for i, ref := range refs {
			batch = append(batch, byRef[ref])
			// A time finer than the database keeps: stored to the millisecond.
			res = append(res, rails.PayoutResult{Status: rails.PayoutSucceeded, RailsReference: "RAILS-" + ref,
				SettledAt: now.Add(time.Duration(i)*time.Millisecond + 123456*time.Nanosecond)})
		}
		var done []*ent.Transaction
		err = e.App.DB.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			done, err = e.App.Withdrawals.SucceedAll(ctx, tx, "probe", batch, res)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(done) != 2 || done[0].Reference != refs[0] || done[1].Reference != refs[2] {
			t.Fatalf("settled %v", done)
		}
		for _, d := range done {
			fresh, err := c.Transaction.Query().Where(transaction.Reference(d.Reference)).Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := txview.JSON(fresh)
			got, _ := txview.JSON(d)
			if !bytes.Equal(got, want) {
				t.Errorf("%s as recorded:\n%s\nas read back:\n%s", d.Reference, got, want)
			}
			if fresh.Status != "success" || fresh.LeaseOwner != nil || fresh.NextRunAt != nil || *fresh.RailsReference != "RAILS-"+d.Reference {
				t.Errorf("%s: status %s, lease %v, next run %v, rails %v", d.Reference, fresh.Status, fresh.LeaseOwner, fresh.NextRunAt, fresh.RailsReference)
			}
			evs, err := c.Event.Query().Where(event.TransactionRef(d.Reference), event.Type("withdrawal.success")).All(ctx)
			if err != nil || len(evs) != 1 {
				t.Fatalf("%s: %d success events: %v", d.Reference, len(evs), err)
			}
			if !bytes.Equal([]byte(evs[0].Payload), want) || evs[0].MerchantID != m.ID || evs[0].Mode != tenant.Test {
				t.Errorf("%s: event %s/%s payload\n%s\nwant\n%s", d.Reference, evs[0].MerchantID, evs[0].Mode, evs[0].Payload, want)
			}
		}
		taken, err := c.Transaction.Query().Where(transaction.Reference(refs[1])).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if taken.Status != "pending" || *taken.LeaseOwner != "other" {
			t.Errorf("the taken payout: status %s, lease %v", taken.Status, *taken.LeaseOwner)
		}
		if n, _ := c.Event.Query().Where(event.TransactionRef(refs[1]), event.Type("withdrawal.success")).Count(ctx); n != 0 {
			t.Errorf("the taken payout has %d success events", n)
		}
		// What is still in flight is exactly the taken payout's charge.
		var inFlight int64
		entries, err := c.LedgerEntry.Query().All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			if a, err := ledger.ParseAccountID(en.AccountID); err == nil && a.Kind == ledger.PayoutsInFlight && a.Mode == tenant.Test {
				inFlight += en.Amount
			}
		}
		if inFlight != taken.AmountCharged {
			t.Errorf("in flight %d, want %d", inFlight, taken.AmountCharged)
		}
		if err := ledger.Check(ctx, e.App.DB); err != nil {
			t.Errorf("ledger invariants: %v", err)
		}
	}, servertest.With("JOBS_POLL_INTERVAL", "1h"))
}
