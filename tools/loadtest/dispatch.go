package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"
)

// dispatchSuite measures webhook deliveries per second end to end: events
// written straight into the outbox (as a burst of operations would), the
// dispatcher's fan-out into deliveries, the signed POSTs to a receiver on
// loopback, and each attempt recorded.
func dispatchSuite(ctx context.Context, o options, p *pg) error {
	fmt.Printf("\n== dispatch: %d events to %d endpoint(s) on a local receiver\n", o.events, o.endpoints)
	var received atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	recv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received.Add(1)
		w.WriteHeader(http.StatusOK)
	})}
	go func() { _ = recv.Serve(ln) }()
	defer recv.Close()

	var proxy *wireProxy
	var extra []string
	if o.countStatements {
		if proxy, err = newWireProxy(p.base.Host); err != nil {
			return err
		}
		defer proxy.close()
		extra = append(extra, "LOADTEST_PROXY="+proxy.addr())
	}
	s, m, dbURL, err := setup(ctx, o, p, "dispatch", extra...)
	if err != nil {
		return err
	}
	defer s.stop()
	bank := m.Bank
	// One real withdrawal gives the payload every benchmark event carries.
	var env struct {
		Data struct {
			Reference string `json:"reference"`
		} `json:"data"`
	}
	ben := map[string]any{"email": "ada@example.com", "bank": bank, "account_name": "Ada Obi", "account_number": "0123456789"}
	if _, err := s.call("POST", "/transactions/withdraw", m.Secret, map[string]any{"beneficiary": ben, "amount": 100, "currency": "NGN"}, &env); err != nil {
		return err
	}
	for i := 0; i < o.endpoints; i++ {
		if _, err := s.call("POST", "/webhooks", m.Secret, map[string]any{"url": fmt.Sprintf("http://%s/hook/%d", ln.Addr(), i)}, nil); err != nil {
			return err
		}
	}
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	// The first event's own deliveries (if any) finish before the clock starts.
	time.Sleep(2 * time.Second)
	base := received.Load()
	if proxy != nil {
		proxy.setLabel("dispatch")
	}
	cpu0 := sampleCPU(s.cmd.Process.Pid)
	start := time.Now()
	// Each event queued for fan-out as the outbox queues it.
	_, err = db.ExecContext(ctx, `WITH ev AS (INSERT INTO events (merchant_id, mode, event_id, type, transaction_ref, payload, created_at, fanned_out)
		SELECT e.merchant_id, e.mode, 'evt_bench_' || g, e.type, e.transaction_ref, e.payload, now(), true
		FROM (SELECT * FROM events WHERE transaction_ref = $1 ORDER BY id LIMIT 1) e, generate_series(1, $2) g
		RETURNING id)
		INSERT INTO event_fanouts (event_id) SELECT id FROM ev`,
		env.Data.Reference, o.events)
	if err != nil {
		return err
	}
	// Wake the dispatcher as another instance's commit would.
	if _, err := db.ExecContext(ctx, "NOTIFY merchantpay_events"); err != nil {
		return err
	}
	inserted := time.Since(start)
	profDone := make(chan struct{})
	go func() {
		defer close(profDone)
		if o.profileDir != "" {
			path := filepath.Join(o.profileDir, "dispatch.cpu.pprof")
			if err := s.cpuProfile(path, 5*time.Second); err != nil {
				fmt.Println("profile:", err)
			}
		}
	}()
	defer func() { <-profDone }()
	want := int64(o.events * o.endpoints)
	deadline := time.Now().Add(10 * time.Minute)
	var done int64
	for done < want && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries WHERE event_id LIKE 'evt_bench_%' AND status = 'succeeded'`).Scan(&done); err != nil {
			return err
		}
	}
	elapsed := time.Since(start)
	cpu := cpuSplit(cpu0, sampleCPU(s.cmd.Process.Pid))
	rate := float64(done) / elapsed.Seconds()
	fmt.Printf("%d events inserted in %.2f s; %d deliveries succeeded and recorded in %.2f s (receiver saw %d)\n",
		o.events, inserted.Seconds(), done, elapsed.Seconds(), received.Load()-base)
	fmt.Printf("    %s (the load generator is the receiver)\n", cpu)
	if proxy != nil {
		proxy.setLabel("")
		fmt.Printf("statements per delivery (through the counting proxy, so slower): %.1f round trips\n", float64(proxy.roundTrips("dispatch"))/float64(done))
		sts := proxy.statements("dispatch")
		sort.Slice(sts, func(i, j int) bool { return sts[i].count > sts[j].count })
		for _, st := range sts[:min(12, len(sts))] {
			fmt.Printf("  %8.3f  %s\n", float64(st.count)/float64(done), oneLine(st.query)[:min(160, len(oneLine(st.query)))])
		}
	}
	fmt.Printf("webhook deliveries: %.0f/s (target >= 2000/s): %s\n", rate, verdictOf(done == want && rate >= 2000))
	return nil
}
