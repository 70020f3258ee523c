package broker_test

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/broker"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

var (
	alice = tenant.Tenant{MerchantID: "m_alice", Mode: tenant.Test}
	bob   = tenant.Tenant{MerchantID: "m_bob", Mode: tenant.Test}
	// aliceLive is alice's other mode: a different tenant.
	aliceLive = tenant.Tenant{MerchantID: "m_alice", Mode: tenant.Live}
)

type env struct {
	t  *testing.T
	db *store.DB
	ob *events.Outbox
	b  *broker.Broker
}

func setup(t *testing.T, url string, cfg broker.Config) *env {
	e := open(t, url)
	e.run(cfg)
	return e
}

// open opens the database; run starts the broker on it.
func open(t *testing.T, url string) *env {
	db := testdb.Open(t, url)
	return &env{t: t, db: db, ob: events.New(db, clock.Real{})}
}

func (e *env) run(cfg broker.Config) {
	if cfg.PollInterval == 0 {
		// Long, so the tests show the wake-up after commit does the work.
		cfg.PollInterval = time.Hour
	}
	e.b = broker.New(e.db, cfg)
	e.ob.OnCommit(e.b.Wake)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.b.Run(ctx); close(done) }()
	e.t.Cleanup(func() { cancel(); <-done })
}

func (e *env) emit(tn tenant.Tenant, typ string) *ent.Event {
	e.t.Helper()
	ev, _ := eventtest.Emit(e.t, e.db, e.ob, tn, typ)
	return ev
}

func (e *env) subscribe(ctx context.Context, tn tenant.Tenant, types []string, after string) <-chan *ent.Event {
	e.t.Helper()
	ch, err := e.b.Subscribe(ctx, tn, types, after)
	if err != nil {
		e.t.Fatalf("subscribe: %v", err)
	}
	return ch
}

// next reads one event or fails after a deadline.
func next(t *testing.T, ch <-chan *ent.Event) *ent.Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatal("subscription closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for an event")
	}
	return nil
}

// expect reads len(want) events and checks they are want, in order.
func expect(t *testing.T, ch <-chan *ent.Event, want ...*ent.Event) {
	t.Helper()
	for i, w := range want {
		got := next(t, ch)
		if got.EventID != w.EventID {
			t.Fatalf("event %d: got %s (%s, seq %d), want %s (seq %d)", i, got.EventID, got.Type, got.ID, w.EventID, w.ID)
		}
	}
}

func TestReplayAfterThenLive(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		e := setup(t, url, broker.Config{})
		var mine []*ent.Event
		for i := 0; i < 5; i++ {
			mine = append(mine, e.emit(alice, "deposit.success"))
			e.emit(bob, "deposit.success")
			e.emit(aliceLive, "deposit.success")
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := e.subscribe(ctx, alice, nil, mine[1].EventID)
		expect(t, ch, mine[2:]...)
		live := []*ent.Event{e.emit(alice, "swap.pending"), e.emit(bob, "swap.pending"), e.emit(alice, "withdrawal.failed")}
		// Bob's event never shows up: the next one is alice's second.
		expect(t, ch, live[0], live[2])

		// Without after: live only, from now on.
		ch2 := e.subscribe(ctx, alice, nil, "")
		last := e.emit(alice, "deposit.failed")
		expect(t, ch2, last)
		expect(t, ch, last)
	})
}

func TestTypesFilter(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		e := setup(t, url, broker.Config{})
		first := e.emit(alice, "deposit.pending")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		want := e.emit(alice, "deposit.success")
		e.emit(alice, "swap.success")
		ch := e.subscribe(ctx, alice, []string{"deposit.success", "withdrawal.success"}, first.EventID)
		expect(t, ch, want)
		e.emit(alice, "deposit.pending")
		w2 := e.emit(alice, "withdrawal.success")
		expect(t, ch, w2)
	})
}

func TestSubscribeErrors(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		e := setup(t, url, broker.Config{})
		bobs := e.emit(bob, "deposit.success")
		ctx := context.Background()
		if _, err := e.b.Subscribe(ctx, alice, nil, bobs.EventID); !apperr.Is(err, apperr.NotFound) {
			t.Fatalf("after another merchant's event: got %v, want NOT_FOUND", err)
		}
		if _, err := e.b.Subscribe(ctx, alice, nil, "evt_nope"); !apperr.Is(err, apperr.NotFound) {
			t.Fatalf("after an unknown event: got %v, want NOT_FOUND", err)
		}
		_, err := e.b.Subscribe(ctx, alice, []string{"deposit.success", "deposit.done"}, "")
		if !apperr.Is(err, apperr.Validation) || apperr.As(err).Fields[0].Field != "types[1]" {
			t.Fatalf("unknown type: got %v, want VALIDATION_ERROR on types[1]", err)
		}
	})
}

// Events committed while the subscriber replays reach it exactly once.
func TestReplayRacesLiveNoGapNoDuplicate(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		e := setup(t, url, broker.Config{Buffer: 4})
		first := e.emit(alice, "deposit.success")
		for i := 0; i < 150; i++ {
			e.emit(alice, "deposit.success")
		}
		const more = 150
		emitted := make(chan *ent.Event, more)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < more; i++ {
				emitted <- e.emit(alice, "deposit.success")
				e.emit(bob, "deposit.success")
			}
			close(emitted)
		}()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := e.subscribe(ctx, alice, nil, first.EventID)
		wg.Wait()
		var last *ent.Event
		for ev := range emitted {
			last = ev
		}
		total := 150 + more
		seen := map[string]bool{}
		var prev int64
		for i := 0; i < total; i++ {
			ev := next(t, ch)
			if seen[ev.EventID] {
				t.Fatalf("duplicate %s", ev.EventID)
			}
			seen[ev.EventID] = true
			if ev.MerchantID != alice.MerchantID {
				t.Fatalf("got another merchant's event")
			}
			if ev.ID <= prev {
				t.Fatalf("out of order: %d after %d", ev.ID, prev)
			}
			prev = ev.ID
		}
		if !seen[last.EventID] {
			t.Fatal("the last event did not arrive")
		}
		// Nothing more: a sentinel comes next, not a duplicate.
		sentinel := e.emit(alice, "swap.failed")
		expect(t, ch, sentinel)
	})
}

// A subscriber that stops reading does not hold up another, and gets every
// event once when it reads again.
func TestSlowSubscriberCatchesUp(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		e := setup(t, url, broker.Config{Buffer: 2, Backlog: 100})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		slow := e.subscribe(ctx, alice, nil, "")
		fast := e.subscribe(ctx, alice, nil, "")
		var all []*ent.Event
		for i := 0; i < 30; i++ {
			ev := e.emit(alice, "deposit.success")
			all = append(all, ev)
			expect(t, fast, ev)
		}
		expect(t, slow, all...)
		ev := e.emit(alice, "deposit.success")
		expect(t, slow, ev)
		expect(t, fast, ev)
	})
}

func TestTooSlowSubscriberIsClosed(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		e := setup(t, url, broker.Config{Buffer: 1, Backlog: 3})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := e.subscribe(ctx, alice, nil, "")
		for i := 0; i < 10; i++ {
			e.emit(alice, "deposit.success")
		}
		// Nothing is read meanwhile: the subscriber falls Buffer+Backlog
		// behind and is dropped. (Reading here would let a quick reader keep
		// up, and the test would wait for a close that never comes.)
		deadline := time.Now().Add(10 * time.Second)
		for e.b.Subscribers() != 0 {
			if time.Now().After(deadline) {
				t.Fatal("the slow subscription was not dropped")
			}
			time.Sleep(10 * time.Millisecond)
		}
		timeout := time.After(10 * time.Second)
		for n := 0; ; n++ {
			select {
			case _, ok := <-ch:
				if !ok {
					if n >= 10 {
						t.Fatalf("read %d events before the close; the backlog should have overflowed", n)
					}
					return
				}
			case <-timeout:
				t.Fatal("the dropped subscription's channel was not closed")
			}
		}
	})
}

func TestCancelClosesChannel(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		e := setup(t, url, broker.Config{})
		first := e.emit(alice, "deposit.success")
		e.emit(alice, "deposit.success")
		ctx, cancel := context.WithCancel(context.Background())
		ch := e.subscribe(ctx, alice, nil, first.EventID)
		cancel()
		for range ch { // drains, then ends
		}
		if n := e.b.Subscribers(); n != 0 {
			t.Fatalf("%d subscribers left", n)
		}
	})
}

// Issue 8's target is at most 30 KiB per idle subscriber; the broker's
// share must be a small part of it.
func TestIdleSubscribersAreLight(t *testing.T) {
	e := setup(t, testdb.MigratedSQLiteURL(t), broker.Config{})
	const n = 10000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	chans := make([]<-chan *ent.Event, n)
	for i := range chans {
		tn := tenant.Tenant{MerchantID: "m_" + string(rune('a'+i%26)), Mode: tenant.Test}
		if i == 0 {
			tn = alice
		}
		chans[i] = e.subscribe(ctx, tn, nil, "")
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perSub := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes per idle subscriber", perSub)
	if perSub > 4<<10 {
		t.Fatalf("%d bytes per idle subscriber, want under 4 KiB", perSub)
	}
	if g := runtime.NumGoroutine() - goroutines; g > 10 {
		t.Fatalf("%d goroutines for %d idle subscribers", g, n)
	}
	ev := e.emit(alice, "deposit.success")
	expect(t, chans[0], ev)
	runtime.KeepAlive(chans)
}
