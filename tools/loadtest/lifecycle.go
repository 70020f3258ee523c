package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// lifecycleSuite counts every database round trip a withdrawal costs over
// its whole life, background work included: -c clients make n withdrawals
// on a service with all its workers, reaching PostgreSQL through the
// counting proxy, and the count stops once every one of them has settled,
// its events have been fanned out and its e-mail handled. It shows what
// the background work of a withdrawal costs next to the request's own.
func lifecycleSuite(ctx context.Context, o options, p *pg) error {
	const n = 2000
	fmt.Printf("\n== lifecycle: database round trips per withdrawal over its whole life (%d withdrawals, %d clients, all workers; counted on the wire)\n", n, o.clients)
	proxy, err := newWireProxy(p.base.Host)
	if err != nil {
		return err
	}
	defer proxy.close()
	s, m, dbURL, err := setup(ctx, o, p, "lifecycle", "LOADTEST_PROXY="+proxy.addr())
	if err != nil {
		return err
	}
	defer s.stop()
	bank := m.Bank
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	ben := map[string]any{"email": "ada@example.com", "bank": bank, "account_name": "Ada Obi", "account_number": "0123456789"}
	proxy.setLabel("lifecycle")
	profiled := make(chan struct{})
	defer func() { <-profiled }() // before the service stops
	if o.profileDir == "" {
		close(profiled)
	} else {
		// The service's CPU profile of the first 8 s: requests and the
		// background work they cause.
		go func() {
			defer close(profiled)
			path := filepath.Join(o.profileDir, "lifecycle.cpu.pprof")
			if err := s.cpuProfile(path, 8*time.Second); err != nil {
				fmt.Println("profile:", err)
			}
		}()
	}
	cpu0 := sampleCPU(s.cmd.Process.Pid)
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, o.clients)
	for range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= n {
				if _, err := s.call("POST", "/transactions/withdraw", m.Secret, map[string]any{"beneficiary": ben, "amount": 100, "currency": "NGN"}, nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	accepted := time.Since(start)
	// Done: every withdrawal settled, every event fanned out, no e-mail left
	// to handle.
	if err := quiesce(ctx, db, 2*time.Minute); err != nil {
		return err
	}
	// Let the last recordings' commits reach the wire.
	time.Sleep(500 * time.Millisecond)
	proxy.setLabel("")
	cpu1 := sampleCPU(s.cmd.Process.Pid)
	fmt.Printf("%d withdrawals accepted in %.2f s, all settled and notified after %.2f s\n", n, accepted.Seconds(), time.Since(start).Seconds())
	fmt.Printf("    %s\n", cpuSplit(cpu0, cpu1))
	perItem := func(a, b time.Duration) float64 { return float64((b - a).Microseconds()) / n }
	fmt.Printf("CPU per withdrawal, whole life: service %.0f µs, postgres %.0f µs (the proxy's work is the load generator's)\n",
		perItem(cpu0.service, cpu1.service), perItem(0, cpu1.postgres.since(cpu0.postgres)))
	fmt.Printf("round trips per withdrawal, whole life: %.2f\n", float64(proxy.roundTrips("lifecycle"))/n)
	sts := proxy.statements("lifecycle")
	sort.SliceStable(sts, func(i, j int) bool { return sts[i].count > sts[j].count })
	for _, st := range sts[:min(30, len(sts))] {
		q := oneLine(st.query)
		fmt.Printf("  %7.3f  %s\n", float64(st.count)/n, q[:min(150, len(q))])
	}
	return nil
}

// quiesce waits until the service's background work is done: no withdrawal
// pending (each payout submitted and settled), every event fanned out, no
// e-mail left to handle. It gives up after limit.
func quiesce(ctx context.Context, db *sql.DB, limit time.Duration) error {
	return waitFor(ctx, db, limit, `SELECT
			(SELECT count(*) FROM transactions WHERE type = 'WITHDRAWAL' AND status = 'pending'),
			(SELECT count(*) FROM event_fanouts),
			(SELECT count(*) FROM email_notifications WHERE status = 'pending')`)
}

// fannedOut waits until every event is fanned out (the fan-out queue is
// empty): the work a commit wakes at once, on a service whose workers do
// not poll.
func fannedOut(ctx context.Context, db *sql.DB, limit time.Duration) error {
	return waitFor(ctx, db, limit, `SELECT 0, (SELECT count(*) FROM event_fanouts), 0`)
}

// waitFor polls q, which counts pending withdrawals, events not fanned out
// and pending e-mails, until all three are zero, for at most limit.
func waitFor(ctx context.Context, db *sql.DB, limit time.Duration, q string) error {
	deadline := time.Now().Add(limit)
	for {
		var pending, unfanned, mails int
		if err := db.QueryRowContext(ctx, q).Scan(&pending, &unfanned, &mails); err != nil {
			return err
		}
		if pending == 0 && unfanned == 0 && mails == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %d withdrawals pending, %d events not fanned out, %d e-mails pending", limit, pending, unfanned, mails)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
