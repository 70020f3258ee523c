package webhooks_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/internal/webhooks"
)

// Two dispatchers on one database (on SQLite, two connections to one file,
// as two processes would have) share the work: every delivery is sent once.
func TestTwoDispatchersSendOnce(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		dbs := []*store.DB{testdb.Open(t, url), testdb.Open(t, url)}
		clk := clock.NewFake(time.Now())
		tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
		ctx := tenant.With(context.Background(), tn)

		var mu sync.Mutex
		hits := map[string]int{}
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			hits[r.Header.Get(hookwire.HeaderID)]++
			mu.Unlock()
		}))
		defer rcv.Close()
		svc := webhooks.New(dbs[0], clk, true, nil)
		u := rcv.URL
		if _, err := svc.Create(ctx, nil, webhooks.CreateInput{URL: &u}); err != nil {
			t.Fatal(err)
		}
		ob := events.New(dbs[0], clk)
		const n = 40
		var ids []string
		for i := 0; i < n; i++ {
			ev, _ := eventtest.Emit(t, dbs[i%2], ob, tn, "deposit.success")
			ids = append(ids, ev.EventID)
		}

		runCtx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, db := range dbs {
			d := webhooks.NewDispatcher(db, clk, webhooks.DispatcherConfig{PollInterval: 5 * time.Millisecond, Concurrency: 4, AllowPrivate: true})
			wg.Add(1)
			go func() { defer wg.Done(); d.Run(runCtx) }()
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			done := 0
			for _, id := range ids {
				ds, err := svc.Deliveries(ctx, nil, id)
				if err != nil {
					t.Fatal(err)
				}
				if len(ds) == 1 && ds[0].Status == webhooks.StatusSucceeded {
					done++
				}
			}
			if done == n {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d deliveries succeeded", done, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if hits[id] != 1 {
				t.Fatalf("%s sent %d times", id, hits[id])
			}
		}
	})
}

func names(f *apperr.Fields) []string {
	var out []string
	for _, e := range f.List() {
		out = append(out, e.Field)
	}
	return out
}

func TestValidate(t *testing.T) {
	u := "ftp://example.com"
	var f apperr.Fields
	webhooks.Validate(webhooks.CreateInput{URL: &u, Events: []string{"deposit.success", "deposit.nope"}}, &f)
	if got := names(&f); len(got) != 2 || got[0] != "url" || got[1] != "events[1]" {
		t.Fatalf("fields %v", got)
	}
	var g apperr.Fields
	webhooks.Validate(webhooks.CreateInput{}, &g)
	if got := names(&g); len(got) != 1 || got[0] != "url" {
		t.Fatalf("fields %v", got)
	}
}

// A dispatcher stopped while attempts are in flight and more are claimed
// and queued returns once the attempts in flight are recorded, and gives
// back the leases of the queued ones: a second dispatcher then sends them
// at once (the fake clock never lets a lease run out), and every event is
// sent exactly once.
func TestDispatcherStopReleasesQueued(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		clk := clock.NewFake(time.Now())
		tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
		ctx := tenant.With(context.Background(), tn)

		var mu sync.Mutex
		hits := map[string]int{}
		arrived := make(chan struct{}, 100)
		gate := make(chan struct{})
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits[r.Header.Get(hookwire.HeaderID)]++
			mu.Unlock()
			arrived <- struct{}{}
			<-gate
		}))
		defer rcv.Close()
		svc := webhooks.New(db, clk, true, nil)
		u := rcv.URL
		if _, err := svc.Create(ctx, nil, webhooks.CreateInput{URL: &u}); err != nil {
			t.Fatal(err)
		}
		ob := events.New(db, clk)
		const n = 12
		var ids []string
		for i := 0; i < n; i++ {
			ev, _ := eventtest.Emit(t, db, ob, tn, "deposit.success")
			ids = append(ids, ev.EventID)
		}
		cfg := webhooks.DispatcherConfig{PollInterval: 5 * time.Millisecond, Concurrency: 2, AllowPrivate: true}

		runCtx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() { defer close(stopped); webhooks.NewDispatcher(db, clk, cfg).Run(runCtx) }()
		for range cfg.Concurrency {
			select {
			case <-arrived:
			case <-time.After(20 * time.Second):
				t.Fatal("the first attempts did not arrive")
			}
		}
		// Both senders are busy; give the claimer time to queue more.
		time.Sleep(100 * time.Millisecond)
		cancel()
		close(gate)
		select {
		case <-stopped:
		case <-time.After(20 * time.Second):
			t.Fatal("Run did not return after its context ended")
		}

		runCtx, cancel = context.WithCancel(context.Background())
		defer cancel()
		go webhooks.NewDispatcher(db, clk, cfg).Run(runCtx)
		deadline := time.Now().Add(20 * time.Second)
		for done := 0; done < n; {
			done = 0
			for _, id := range ids {
				ds, err := svc.Deliveries(ctx, nil, id)
				if err != nil {
					t.Fatal(err)
				}
				if len(ds) == 1 && ds[0].Status == webhooks.StatusSucceeded {
					if len(ds[0].Attempts) != 1 || ds[0].AttemptCount != 1 {
						t.Fatalf("%s: %d attempt rows, count %d", id, len(ds[0].Attempts), ds[0].AttemptCount)
					}
					done++
				}
			}
			if done < n && time.Now().After(deadline) {
				t.Fatalf("%d of %d deliveries succeeded: queued leases were not given back", done, n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if hits[id] != 1 {
				t.Fatalf("%s sent %d times", id, hits[id])
			}
		}
	})
}

// A retry goes out when it falls due, not at the next poll: with a poll
// interval of an hour, an endpoint that fails once gets its second attempt
// after the schedule's 100 ms.
func TestRetryOnTime(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		clk := clock.Real{}
		tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
		ctx := tenant.With(context.Background(), tn)
		var mu sync.Mutex
		var times []time.Time
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			times = append(times, time.Now())
			if len(times) == 1 {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}))
		defer rcv.Close()
		svc := webhooks.New(db, clk, true, nil)
		u := rcv.URL
		if _, err := svc.Create(ctx, nil, webhooks.CreateInput{URL: &u}); err != nil {
			t.Fatal(err)
		}
		ev, _ := eventtest.Emit(t, db, events.New(db, clk), tn, "deposit.success")
		runCtx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cfg := webhooks.DispatcherConfig{PollInterval: time.Hour, Concurrency: 2, AllowPrivate: true, Schedule: []time.Duration{100 * time.Millisecond}}
		go webhooks.NewDispatcher(db, clk, cfg).Run(runCtx)
		deadline := time.Now().Add(20 * time.Second)
		for {
			ds, err := svc.Deliveries(ctx, nil, ev.EventID)
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) == 1 && ds[0].Status == webhooks.StatusSucceeded {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the retry was not sent when due: %+v", ds)
			}
			time.Sleep(10 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(times) != 2 || times[1].Sub(times[0]) < 100*time.Millisecond {
			t.Fatalf("attempts at %v", times)
		}
	})
}
