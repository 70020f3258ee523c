package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// interruptFixture is one event's delivery to a receiver answering status
// (a pointer, changed by the test), which counts the requests it got, each
// with its webhook-id.
type interruptFixture struct {
	db   *store.DB
	clk  *clock.Fake
	svc  *Service
	ctx  context.Context // the merchant's
	sys  context.Context
	evID string

	mu     sync.Mutex
	ids    []string
	status int
}

func newInterruptFixture(t *testing.T, url string) *interruptFixture {
	t.Helper()
	f := &interruptFixture{db: testdb.Open(t, url), clk: clock.NewFake(time.Now()), status: http.StatusOK}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.ids = append(f.ids, r.Header.Get(hookwire.HeaderID))
		w.WriteHeader(f.status)
	}))
	t.Cleanup(rcv.Close)
	tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
	f.ctx = tenant.With(context.Background(), tn)
	f.sys = tenant.System(context.Background())
	f.svc = New(f.db, f.clk, true, nil)
	u := rcv.URL
	if _, err := f.svc.Create(f.ctx, nil, CreateInput{URL: &u}); err != nil {
		t.Fatal(err)
	}
	ev, _ := eventtest.Emit(t, f.db, events.New(f.db, f.clk), tn, "deposit.success")
	f.evID = ev.EventID
	return f
}

// dispatcher is an instance of the service's dispatcher, with a retry
// schedule of len(schedule) retries.
func (f *interruptFixture) dispatcher(t *testing.T, schedule ...time.Duration) *Dispatcher {
	t.Helper()
	d := NewDispatcher(f.db, f.clk, DispatcherConfig{AllowPrivate: true, Schedule: schedule})
	if err := d.fanOut(f.sys, func() {}); err != nil {
		t.Fatal(err)
	}
	return d
}

// claimOne claims the delivery with d, which must find it.
func (f *interruptFixture) claimOne(t *testing.T, d *Dispatcher) claimedDelivery {
	t.Helper()
	claimed, err := d.claim(f.sys, 10)
	if err != nil || len(claimed) != 1 {
		t.Fatalf("claim: %d deliveries, %v", len(claimed), err)
	}
	return claimed[0]
}

// attemptAndRecord runs d's attempt of a as its senders do and records its
// outcome as its recorders do; it reports whether an attempt was made.
func (f *interruptFixture) attemptAndRecord(t *testing.T, d *Dispatcher, a claimedDelivery) bool {
	t.Helper()
	records := make(chan recordReq, 1)
	d.attempt(f.sys, a, records, func() {})
	select {
	case r := <-records:
		var err error
		r.done = func(e error) { err = e }
		d.recordWaiting(f.sys, []recordReq{r})
		if err != nil {
			t.Fatal(err)
		}
		return !r.unmark
	default:
		return false
	}
}

func (f *interruptFixture) delivery(t *testing.T) Delivery {
	t.Helper()
	ds, err := f.svc.Deliveries(f.ctx, nil, f.evID)
	if err != nil || len(ds) != 1 {
		t.Fatalf("deliveries: %+v, %v", ds, err)
	}
	return ds[0]
}

func (f *interruptFixture) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ids...)
}

// An instance that dies during an attempt (its request reached the
// receiver, its outcome was never recorded) leaves an attempt that the
// next claim, once the lease ran out, records as interrupted: numbered
// before the attempt that follows, begun when the dead instance claimed
// it, no answer, the error in classified words. The receiver saw two
// requests with one webhook-id, the delivery shows two attempts.
func TestInterruptedAttemptRecorded(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		f := newInterruptFixture(t, url)
		dead := f.dispatcher(t, time.Second, time.Second)
		a := f.claimOne(t, dead)
		claimedAt := f.clk.Now()
		_ = dead.send(f.sys, a.dl, a.ep, a.ev) // and the instance dies: nothing recorded

		next := f.dispatcher(t, time.Second, time.Second)
		if claimed, err := next.claim(f.sys, 10); err != nil || len(claimed) != 0 {
			t.Fatalf("claimed under the dead instance's lease: %d, %v", len(claimed), err)
		}
		f.clk.Advance(dead.cfg.Lease + time.Second)
		b := f.claimOne(t, next)
		if !f.attemptAndRecord(t, next, b) {
			t.Fatal("no attempt after the interrupted one")
		}

		got := f.delivery(t)
		if got.Status != StatusSucceeded || got.AttemptCount != 2 || len(got.Attempts) != 2 {
			t.Fatalf("delivery: %+v", got)
		}
		first, second := got.Attempts[0], got.Attempts[1]
		if first.Number != 1 || !first.StartedAt.Equal(claimedAt) || first.StatusCode != nil ||
			first.Error == nil || *first.Error != Interrupted || first.Success || first.ResponseBody != "" {
			t.Fatalf("interrupted attempt: %+v", first)
		}
		if second.Number != 2 || second.StatusCode == nil || *second.StatusCode != http.StatusOK || !second.Success ||
			second.StartedAt.Before(first.StartedAt) {
			t.Fatalf("the attempt after it: %+v", second)
		}
		if ids := f.received(); len(ids) != 2 || ids[0] != f.evID || ids[1] != f.evID {
			t.Fatalf("the receiver got %v", ids)
		}
		row, err := f.db.Reader().WebhookDelivery.Get(f.sys, got.ID)
		if err != nil || row.InflightAttempt != nil || row.InflightStartedAt != nil || row.LeaseOwner != nil {
			t.Fatalf("delivery row after recording: %+v, %v", row, err)
		}
	})
}

// An interrupted attempt may never have reached the receiver (a claim
// still queued when its instance died is taken for one), so it takes no
// step of the retry schedule and never fails the delivery: when the
// schedule's last attempt is interrupted, a real attempt follows at once,
// without the schedule's delay, and only its outcome fails the delivery. A
// redelivery on demand then sends it again, numbered on.
func TestInterruptedLastAttemptRetried(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		f := newInterruptFixture(t, url)
		f.status = http.StatusServiceUnavailable
		dead := f.dispatcher(t, time.Hour) // two attempts in all
		if !f.attemptAndRecord(t, dead, f.claimOne(t, dead)) {
			t.Fatal("no first attempt")
		}
		f.clk.Advance(time.Hour)
		f.claimOne(t, dead) // the last attempt's claim, still queued when the instance dies

		f.clk.Advance(dead.cfg.Lease + time.Second)
		next := f.dispatcher(t, time.Hour)
		if !f.attemptAndRecord(t, next, f.claimOne(t, next)) {
			t.Fatal("no real attempt after the interrupted last one")
		}
		got := f.delivery(t)
		if got.Status != StatusFailed || got.CompletedAt == nil || got.NextAttemptAt != nil ||
			got.AttemptCount != 3 || len(got.Attempts) != 3 || got.LastError == nil || *got.LastError != "HTTP 503" {
			t.Fatalf("delivery: %+v", got)
		}
		for i, at := range got.Attempts {
			if at.Number != i+1 || at.Error == nil {
				t.Fatalf("attempts: %+v", got.Attempts)
			}
		}
		if e := *got.Attempts[1].Error; e != Interrupted || *got.Attempts[2].Error != "HTTP 503" {
			t.Fatalf("attempts: %+v", got.Attempts)
		}
		if n := len(f.received()); n != 2 {
			t.Fatalf("the receiver got %d requests, want 2 (the interrupted attempt was never sent)", n)
		}

		f.status = http.StatusOK
		if _, err := f.svc.Redeliver(f.ctx, nil, f.evID); err != nil {
			t.Fatal(err)
		}
		if !f.attemptAndRecord(t, next, f.claimOne(t, next)) {
			t.Fatal("no attempt after the redelivery")
		}
		got = f.delivery(t)
		if got.Status != StatusSucceeded || len(got.Attempts) != 4 || got.Attempts[3].Number != 4 || !got.Attempts[3].Success {
			t.Fatalf("after the redelivery: %+v", got)
		}
	})
}

// Instances that keep dying with a delivery claimed never fail it: each
// next claim records one more interrupted attempt, none takes a step of
// the schedule, and the first instance to live makes the real attempt.
func TestInterruptedCrashLoopNotFailed(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		f := newInterruptFixture(t, url)
		d := f.dispatcher(t, time.Hour) // two attempts in all
		f.claimOne(t, d)
		for i := range 3 {
			f.clk.Advance(d.cfg.Lease + time.Second)
			a := f.claimOne(t, d)
			if a.interrupted == nil {
				t.Fatalf("claim %d: no interrupted attempt found", i+2)
			}
			if held, err := d.recordInterrupted(f.sys, a.dl, *a.interrupted); err != nil || !held {
				t.Fatalf("claim %d: recording the interrupted attempt: %v, %v", i+2, held, err)
			}
			// and this instance dies too, before its attempt
		}
		got := f.delivery(t)
		if got.Status != StatusPending || got.AttemptCount != 3 || len(got.Attempts) != 3 {
			t.Fatalf("after a crash loop: %+v", got)
		}
		if row, err := f.db.Reader().WebhookDelivery.Get(f.sys, got.ID); err != nil || row.RunAttempts != 0 {
			t.Fatalf("schedule steps taken by interrupted attempts: %+v, %v", row, err)
		}
		f.clk.Advance(d.cfg.Lease + time.Second)
		if !f.attemptAndRecord(t, d, f.claimOne(t, d)) {
			t.Fatal("no real attempt after the crash loop")
		}
		got = f.delivery(t)
		if got.Status != StatusSucceeded || len(got.Attempts) != 5 || !got.Attempts[4].Success || len(f.received()) != 1 {
			t.Fatalf("after the crash loop: %+v, %d requests", got, len(f.received()))
		}
	})
}

// A claim whose delivery was not attempted leaves no interrupted attempt:
// one given back at a stop (release), one that waited past the point where
// its attempt could outlast the lease, and one whose mark is stale (an
// instance of the release before recorded an attempt without clearing it).
func TestUnattemptedClaimNotInterrupted(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		f := newInterruptFixture(t, url)
		d := f.dispatcher(t, time.Second)
		expectFresh := func(what string) claimedDelivery {
			t.Helper()
			a := f.claimOne(t, d)
			if a.interrupted != nil {
				t.Fatalf("%s: taken for an interrupted attempt begun at %v", what, a.interrupted)
			}
			return a
		}

		a := expectFresh("the first claim")
		queue := make(chan claimedDelivery, 1)
		queue <- a
		close(queue)
		d.release(f.sys, queue)
		f.clk.Advance(time.Second)

		a = expectFresh("after a release")
		f.clk.Advance(d.cfg.Lease - d.cfg.Timeout + time.Second) // too late to start
		if f.attemptAndRecord(t, d, a) {
			t.Fatal("attempted past the point where it could outlast its lease")
		}
		f.clk.Advance(d.cfg.Timeout)

		a = expectFresh("after a claim left to its lease")
		// The release before records an attempt and leaves the mark.
		err := f.db.Within(f.sys, nil, func(ctx context.Context, tx *ent.Tx) error {
			return tx.Client().WebhookDelivery.UpdateOneID(a.dl.ID).AddAttempts(1).SetLeaseUntil(f.clk.Now()).Exec(ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
		f.clk.Advance(time.Second)
		expectFresh("after a stale mark")
		if n := len(f.received()); n != 0 {
			t.Fatalf("the receiver got %d requests", n)
		}
	})
}

// Claims left to their lease without an attempt (a queue that waited too
// long) have their marks cleared by the recorders, in one update beside
// the outcomes of the batch: no attempt is recorded for them, their leases
// stay, and the next claim does not take them for interrupted attempts.
func TestLeftClaimsUnmarkedInABatch(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		f := newInterruptFixture(t, url)
		for range 2 { // three endpoints: three deliveries of the event
			ep := "http://127.0.0.1:1/left" // never sent
			if _, err := f.svc.Create(f.ctx, nil, CreateInput{URL: &ep}); err != nil {
				t.Fatal(err)
			}
		}
		d := f.dispatcher(t, time.Hour)
		claimed, err := d.claim(f.sys, 10)
		if err != nil || len(claimed) != 3 {
			t.Fatalf("claim: %d, %v", len(claimed), err)
		}
		var batch []recordReq
		var sent *ent.WebhookDelivery
		for _, a := range claimed {
			if a.ep.URL != "http://127.0.0.1:1/left" {
				records := make(chan recordReq, 1)
				d.attempt(f.sys, a, records, func() {})
				batch = append(batch, <-records)
				sent = a.dl
				continue
			}
			batch = append(batch, leave(a.dl, nil))
		}
		errs := 0
		for i := range batch {
			batch[i].done = func(err error) {
				if err != nil {
					errs++
				}
			}
		}
		d.recordWaiting(f.sys, batch)
		if errs != 0 || sent == nil {
			t.Fatalf("%d errors, sent %v", errs, sent)
		}
		rows, err := f.db.Reader().WebhookDelivery.Query().All(f.sys)
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			if row.ID == sent.ID {
				if row.Status != StatusSucceeded || row.Attempts != 1 {
					t.Fatalf("the attempted delivery: %+v", row)
				}
				continue
			}
			if row.InflightAttempt != nil || row.InflightStartedAt != nil || row.Attempts != 0 ||
				row.LeaseOwner == nil || *row.LeaseOwner != d.owner {
				t.Fatalf("a left delivery: %+v", row)
			}
		}
		if n, err := f.db.Reader().WebhookAttempt.Query().Count(f.sys); err != nil || n != 1 {
			t.Fatalf("%d attempts recorded, %v", n, err)
		}
		f.clk.Advance(d.cfg.Lease + time.Second)
		again, err := d.claim(f.sys, 10)
		if err != nil || len(again) != 2 {
			t.Fatalf("claim after the leases ran out: %d, %v", len(again), err)
		}
		for _, a := range again {
			if a.interrupted != nil {
				t.Fatalf("a left claim taken for an interrupted attempt: %+v", a.dl)
			}
		}
	})
}
