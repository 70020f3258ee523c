package webhooks

import (
	"testing"
	"time"

	"merchantpay/internal/testdb"
)

// The recorders may clear a left claim's mark late: after its lease ran
// out and the delivery was claimed again, by the same instance or by
// another. The late clear keeps the later claim's mark, whether it lands
// before that claim records the attempt it found interrupted (which then
// goes on to a real attempt) or after it (the mark of the real attempt,
// which a crash would leave to be recorded as interrupted).
func TestLateUnmarkKeepsReclaimMark(t *testing.T) {
	cases := []struct {
		name       string
		sameOwner  bool
		afterFound bool // the clear lands after the re-claim recorded the interrupted attempt
	}{
		{"same owner, before the interrupted attempt is recorded", true, false},
		{"same owner, after the interrupted attempt is recorded", true, true},
		{"another owner, before the interrupted attempt is recorded", false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			testdb.EachMigrated(t, func(t *testing.T, url string) {
				f := newInterruptFixture(t, url)
				d := f.dispatcher(t, time.Hour)
				a := f.claimOne(t, d)
				f.clk.Advance(d.cfg.Lease - d.cfg.Timeout + time.Second) // too late to start
				records := make(chan recordReq, 1)
				d.attempt(f.sys, a, records, func() {})
				var late recordReq
				select {
				case late = <-records:
				default:
				}
				if !late.unmark {
					t.Fatalf("the claim was not left to its lease: %+v", late)
				}

				f.clk.Advance(d.cfg.Timeout) // the lease ran out before the recorders got to it
				d2 := d
				if !tc.sameOwner {
					d2 = f.dispatcher(t, time.Hour)
				}
				again := f.claimOne(t, d2)
				if again.interrupted == nil {
					t.Fatal("the re-claim did not find the mark left")
				}
				want := 1
				if tc.afterFound {
					held, err := d2.recordInterrupted(f.sys, again.dl, *again.interrupted)
					if err != nil || !held {
						t.Fatalf("recording the interrupted attempt: %v, %v", held, err)
					}
					again.interrupted = nil
					want = 2
				}

				var unmarkErr error
				late.done = func(err error) { unmarkErr = err }
				d.recordWaiting(f.sys, []recordReq{late})
				if unmarkErr != nil {
					t.Fatal(unmarkErr)
				}
				row, err := f.db.Reader().WebhookDelivery.Get(f.sys, a.dl.ID)
				if err != nil {
					t.Fatal(err)
				}
				if row.InflightAttempt == nil || *row.InflightAttempt != want || row.InflightStartedAt == nil ||
					row.LeaseOwner == nil || *row.LeaseOwner != d2.owner {
					t.Fatalf("the late clear took the re-claim's mark: attempt %v, started %v, owner %v",
						row.InflightAttempt, row.InflightStartedAt, row.LeaseOwner)
				}

				// The re-claim's attempt goes on: the interrupted one is
				// recorded, then a real one is made.
				if !f.attemptAndRecord(t, d2, again) {
					t.Fatal("the re-claim made no attempt")
				}
				if got := f.delivery(t); got.Status != StatusSucceeded || got.AttemptCount != 2 || len(got.Attempts) != 2 || len(f.received()) != 1 {
					t.Fatalf("after the re-claim's attempt: %+v, %d requests", got, len(f.received()))
				}
			})
		})
	}
}
