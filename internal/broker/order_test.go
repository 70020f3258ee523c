package broker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/internal/broker"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// openEvent stores an event of tn's in a transaction it leaves open.
func (e *env) openEvent(tn tenant.Tenant, typ string) (*ent.Tx, *ent.Event) {
	e.t.Helper()
	tx, row := e.openRow(tn)
	return tx, e.emitIn(tx, tn, typ, row)
}

// openRow begins a transaction and writes a deposit row in it (the
// transaction takes its PostgreSQL transaction id).
func (e *env) openRow(tn tenant.Tenant) (*ent.Tx, *ent.Transaction) {
	e.t.Helper()
	ctx := tenant.With(context.Background(), tn)
	_, tx, err := e.db.Begin(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = tx.Rollback() })
	row, err := eventtest.Transaction(ctx, tx)
	if err != nil {
		e.t.Fatal(err)
	}
	return tx, row
}

// emitIn stores an event about row in tx, left open.
func (e *env) emitIn(tx *ent.Tx, tn tenant.Tenant, typ string, row *ent.Transaction) *ent.Event {
	e.t.Helper()
	ctx := tenant.With(context.Background(), tn)
	if err := e.ob.Emit(ctx, tx, typ, row); err != nil {
		e.t.Fatal(err)
	}
	evs, err := e.ob.ForTransaction(ctx, tx, row.Reference)
	if err != nil || len(evs) != 1 {
		e.t.Fatalf("the open transaction's events: %v, %v", evs, err)
	}
	return evs[0]
}

// quiet checks that nothing arrives on ch for d.
func quiet(t *testing.T, ch <-chan *ent.Event, d time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("subscription closed")
		}
		t.Fatalf("got %s (seq %d) while an earlier id is still in flight", ev.EventID, ev.ID)
	case <-time.After(d):
	}
}

// PostgreSQL may make ids visible out of order: an event waits for the
// transaction that drew a smaller id, and both arrive in id order, live and
// for a subscriber resuming after the last event it saw.
func TestOutOfOrderCommitDeliveredInOrder(t *testing.T) {
	e := setup(t, testdb.MigratedPostgresURL(t), broker.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := e.subscribe(ctx, alice, nil, "")
	before := e.emit(alice, "deposit.pending")
	expect(t, live, before)

	tx, early := e.openEvent(alice, "deposit.pending")
	later := e.emit(alice, "deposit.success")
	if later.ID <= early.ID {
		t.Fatalf("ids %d, %d: want the open transaction's to be smaller", early.ID, later.ID)
	}
	quiet(t, live, 500*time.Millisecond)
	// A client that saw before last resumes: its replay stops below the
	// open id, and the rest comes in order.
	resumed := e.subscribe(ctx, alice, nil, before.EventID)
	quiet(t, resumed, 300*time.Millisecond)

	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	expect(t, live, early, later)
	expect(t, resumed, early, later)
	// After the last event seen, now complete: only what comes next.
	afterLater := e.subscribe(ctx, alice, nil, later.EventID)
	sentinel := e.emit(alice, "deposit.failed")
	expect(t, live, sentinel)
	expect(t, resumed, sentinel)
	expect(t, afterLater, sentinel)
}

// A rolled-back transaction's id holds the events after it for a poll or
// two, not GapTimeout.
func TestRolledBackIDReleasesHeldEvents(t *testing.T) {
	e := setup(t, testdb.MigratedPostgresURL(t), broker.Config{PollInterval: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := e.subscribe(ctx, alice, nil, "")
	tx, gone := e.openEvent(alice, "deposit.pending")
	later := e.emit(alice, "deposit.success")
	if later.ID <= gone.ID {
		t.Fatalf("ids %d, %d: want the open transaction's to be smaller", gone.ID, later.ID)
	}
	quiet(t, live, 300*time.Millisecond)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// next waits 10 s at most, far below the default GapTimeout.
	expect(t, live, later)
	sentinel := e.emit(alice, "deposit.failed")
	expect(t, live, sentinel)
}

// A transaction that began after the one committing the larger id (so with
// a larger transaction id than any that has ended) but drew the smaller
// event id is still waited for, not taken for a rollback.
func TestYoungerTransactionWaitedFor(t *testing.T) {
	e := setup(t, testdb.MigratedPostgresURL(t), broker.Config{PollInterval: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := e.subscribe(ctx, alice, nil, "")
	older, olderRow := e.openRow(alice)
	younger, youngerRow := e.openRow(alice)
	early := e.emitIn(younger, alice, "deposit.pending", youngerRow)
	later := e.emitIn(older, alice, "deposit.success", olderRow)
	if later.ID <= early.ID {
		t.Fatalf("ids %d, %d: want the younger transaction's to be smaller", early.ID, later.ID)
	}
	if err := older.Commit(); err != nil {
		t.Fatal(err)
	}
	quiet(t, live, 500*time.Millisecond)
	if err := younger.Commit(); err != nil {
		t.Fatal(err)
	}
	expect(t, live, early, later)
}

// A hub starting above ids that will never come (rolled back on
// PostgreSQL) hands out what follows them soon, replayed and live.
func TestStartAboveRolledBackID(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		e := open(t, url)
		first := e.emit(alice, "deposit.pending")
		tx, _ := e.openEvent(alice, "deposit.pending")
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		mid := []*ent.Event{e.emit(alice, "deposit.success"), e.emit(alice, "swap.pending")}
		e.run(broker.Config{PollInterval: 50 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := e.subscribe(ctx, alice, nil, first.EventID)
		expect(t, ch, mid...)
		last := e.emit(alice, "swap.success")
		expect(t, ch, last)
	})
}

// Concurrent writers commit ids out of order: a live subscriber still gets
// every event once, in id order, and resuming after any event it got
// yields exactly the ones it got next.
func TestConcurrentWritersInOrder(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		e := setup(t, url, broker.Config{PollInterval: 50 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		live := e.subscribe(ctx, alice, nil, "")
		const writers, each = 6, 10
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < each; i++ {
					tctx := tenant.With(context.Background(), alice)
					err := e.db.Within(tctx, nil, func(ctx context.Context, tx *ent.Tx) error {
						row, err := eventtest.Transaction(ctx, tx)
						if err != nil {
							return err
						}
						if err := e.ob.Emit(ctx, tx, "withdrawal.pending", row); err != nil {
							return err
						}
						// Some commit soon after drawing their id, some later.
						time.Sleep(time.Duration((w*7+i*3)%11) * time.Millisecond)
						return nil
					})
					if err != nil {
						t.Error(err)
						return
					}
				}
			}(w)
		}
		wg.Wait()
		var got []*ent.Event
		for i := 0; i < writers*each; i++ {
			ev := next(t, live)
			if i > 0 && ev.ID <= got[i-1].ID {
				t.Fatalf("event %d: seq %d after %d", i, ev.ID, got[i-1].ID)
			}
			got = append(got, ev)
		}
		for _, k := range []int{0, writers*each/2 - 1} {
			resumed := e.subscribe(ctx, alice, nil, got[k].EventID)
			expect(t, resumed, got[k+1:]...)
		}
	})
}

// A gap filled by its second look costs no read of the transactions in
// flight; one still missing then does.
func TestGapFilledBySecondLookReadsNoInFlight(t *testing.T) {
	e := setup(t, testdb.MigratedPostgresURL(t), broker.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := e.subscribe(ctx, alice, nil, "")
	tx, early := e.openEvent(alice, "deposit.pending")
	later := e.emit(alice, "deposit.success") // the hub notices early's gap and looks once
	quiet(t, live, 200*time.Millisecond)
	if err := tx.Commit(); err != nil { // its wake-up is the gap's second look
		t.Fatal(err)
	}
	expect(t, live, early, later)
	if n := broker.InFlightReads(e.b); n != 0 {
		t.Fatalf("%d reads of the transactions in flight, want none: the gap was filled at its second look", n)
	}

	tx, early = e.openEvent(alice, "deposit.pending")
	later = e.emit(alice, "deposit.success")
	quiet(t, live, 200*time.Millisecond)
	e.b.Wake() // second look, the gap still open
	for deadline := time.Now().Add(5 * time.Second); broker.InFlightReads(e.b) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("a gap still open at its second look did not read the transactions in flight")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	expect(t, live, early, later)
}
