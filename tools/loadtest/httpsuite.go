package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// measured is a phase and the mean of the pgbench runs around it (zero
// when the phase did not run).
type measured struct {
	phase
	ran      bool
	yardTPS  float64 // mean of pgbench's runs just before and after
	yardName string
}

// ratio is the phase's throughput against its yardstick.
func (m measured) ratio() float64 {
	if m.yardTPS <= 0 {
		return 0
	}
	return m.Throughput / m.yardTPS
}

// httpResults are the figures the targets are judged on.
type httpResults struct {
	keyed, keyless, gqlKeyed, gqlKeyless, get measured
}

func httpSuite(ctx context.Context, o options, p *pg) error {
	fmt.Printf("\n== http: %d closed-loop clients, %s per phase, LOG_LEVEL=%s, load generator GOMAXPROCS %d; yardstick pgbench -i -s %d once, then -M prepared -c %d -j %d -T %d just before and just after each phase\n",
		o.clients, o.duration, o.logLevel, attackProcs, o.pgbenchScale, o.clients, min(2, o.clients), max(1, int(o.duration.Seconds())))
	t := time.Now()
	pgb, err := p.newPgbench(ctx, o.clients, o.pgbenchScale, o.duration)
	if err != nil {
		return err
	}
	fmt.Printf("    (pgbench -i -s %d took %.1f s)\n", o.pgbenchScale, time.Since(t).Seconds())

	s, m, dbURL, err := setup(ctx, o, p, "http")
	if err != nil {
		return err
	}
	defer s.stop()
	bank := m.Bank
	if o.profileDir != "" {
		if err := os.MkdirAll(o.profileDir, 0o755); err != nil {
			return err
		}
	}
	var seq atomic.Uint64
	var mu sync.Mutex
	var refs []string
	keepRef := func(r *vegeta.Result) {
		var env struct {
			Data struct {
				Reference string `json:"reference"`
			} `json:"data"`
		}
		if json.Unmarshal(r.Body, &env) == nil && env.Data.Reference != "" {
			mu.Lock()
			refs = append(refs, env.Data.Reference)
			mu.Unlock()
		}
	}
	// Warm-up: connections, caches, the first pages of the tables. Its
	// withdrawals are the GET phase's references if no REST withdrawal
	// phase runs.
	attack(s, "warm-up", o.clients, 2*time.Second, withdrawTargeter(s.URL, m.Secret, bank, true, &seq), nil, keepRef)

	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	// quiet waits for the background work of the phases before (payouts
	// submitted and settled 3 s later, events fanned out, e-mails) to end,
	// so that neither a phase nor a pgbench run is charged with it. A
	// withdrawal phase still carries its own.
	quiet := func() error {
		t := time.Now()
		if err := quiesce(ctx, db, 2*time.Minute); err != nil {
			return err
		}
		fmt.Printf("    (quiet after %.2f s)\n", time.Since(t).Seconds())
		return nil
	}
	// tidy readies the service's database for a phase. pgbench vacuums its
	// four tables before each run (-v); the service's tables get VACUUM
	// (ANALYZE) once the service is quiet, as autovacuum would do in
	// production (it may be off on a test server: the header says), so
	// that no phase works through the dead rows of the ones before it (the
	// payout worker's row versions, the fan-out queue's deleted rows) and
	// the planner knows the tables' present size (the service's prepared
	// statements would otherwise keep plans made for empty tables).
	tidy := func() error {
		if err := quiet(); err != nil {
			return err
		}
		return vacuumAnalyze(ctx, dbURL)
	}
	// baseline runs one of pgbench's workloads on the quiet server. The
	// service is idle meanwhile (its workers poll every
	// JOBS_POLL_INTERVAL); the line shows what it took.
	baseline := func(name string, selectOnly bool) (pgbenchResult, error) {
		if err := quiet(); err != nil {
			return pgbenchResult{}, err
		}
		c0 := sampleCPU(s.cmd.Process.Pid)
		r, err := pgb.run(ctx, selectOnly)
		if err != nil {
			return r, err
		}
		// (pgbench's own backends have exited by the second sample, so
		// only the service's share is meaningful here.)
		c1 := sampleCPU(s.cmd.Process.Pid)
		fmt.Printf("%-40s %8.0f tps  (latency average %.2f ms)  [%s]  service meanwhile %.2f cores\n", name, r.TPS, r.Latency, r.Command,
			(c1.service-c0.service).Seconds()/c1.at.Sub(c0.at).Seconds())
		return r, nil
	}
	// measure runs a phase between two runs of a pgbench workload: this
	// machine's speed drifts by up to 2x within minutes, so a yardstick
	// taken at another time was measured on a different machine, in
	// effect. The phase's ratio is against the mean of the two.
	measure := func(profile string, selectOnly bool, fn func() phase) (measured, error) {
		yard := "TPC-B-like"
		if selectOnly {
			yard = "select-only"
		}
		if err := tidy(); err != nil {
			return measured{}, err
		}
		before, err := baseline("pgbench "+yard+", before", selectOnly)
		if err != nil {
			return measured{}, err
		}
		var ph phase
		withProfile(o, s, profile, func() { ph = fn() })
		fmt.Println(ph)
		after, err := baseline("pgbench "+yard+", after", selectOnly)
		if err != nil {
			return measured{}, err
		}
		r := measured{phase: ph, ran: true, yardTPS: (before.TPS + after.TPS) / 2, yardName: yard}
		fmt.Printf("    ratio to pgbench %s (mean %.0f tps) = %.2f\n", yard, r.yardTPS, r.ratio())
		return r, nil
	}
	// withdrawals measures one shape of withdrawal against TPC-B-like, the
	// merchant funded beforehand for every withdrawal it can make.
	withdrawals := func(profile, name string, tr vegeta.Targeter, check func(*vegeta.Result) error, keep func(*vegeta.Result)) (measured, error) {
		if err := s.fund(m.Secret, "NGN"); err != nil {
			return measured{}, err
		}
		return measure(profile, false, func() phase { return attack(s, name, o.clients, o.duration, tr, check, keep) })
	}

	var res httpResults
	if o.phase("withdraw") {
		if res.keyed, err = withdrawals("withdraw", "POST /transactions/withdraw (key)",
			withdrawTargeter(s.URL, m.Secret, bank, true, &seq), nil, keepRef); err != nil {
			return err
		}
	}
	if o.phase("withdraw-keyless") {
		if res.keyless, err = withdrawals("withdraw-keyless", "POST /transactions/withdraw (no key)",
			withdrawTargeter(s.URL, m.Secret, bank, false, &seq), nil, keepRef); err != nil {
			return err
		}
	}
	if o.phase("graphql") {
		if res.gqlKeyed, err = withdrawals("graphql-withdraw", "GraphQL withdraw (idempotencyKey)",
			gqlWithdrawTargeter(s.URL, m.Secret, bank, true, &seq), gqlCheck, nil); err != nil {
			return err
		}
	}
	if o.phase("graphql-keyless") {
		if res.gqlKeyless, err = withdrawals("graphql-withdraw-keyless", "GraphQL withdraw (no key)",
			gqlWithdrawTargeter(s.URL, m.Secret, bank, false, &seq), gqlCheck, nil); err != nil {
			return err
		}
	}
	if o.phase("get") {
		if len(refs) == 0 {
			return fmt.Errorf("no withdrawal succeeded: nothing to GET")
		}
		if res.get, err = measure("get", true, func() phase {
			return attack(s, "GET /transactions/{ref}", o.clients, o.duration, getTargeter(s.URL, m.Secret, refs), nil, nil)
		}); err != nil {
			return err
		}
	}
	if o.phase("rates") {
		if err := tidy(); err != nil {
			return err
		}
		var rate phase
		withProfile(o, s, "rates", func() {
			rate = attack(s, "POST /rates/create", o.clients, o.duration, rateTargeter(s.URL, m.Secret, true, &seq), nil, nil)
		})
		fmt.Println(rate)
	}
	if o.phase("spread") {
		if err := spreadPhase(ctx, o, s, m, dbURL, tidy, &seq); err != nil {
			return err
		}
	}
	printTargets(o, res)
	return nil
}

// spreadPhase sends the keyed withdrawals spread over as many merchants as
// clients: no balance row is shared, so the gap to the first figure is what
// the hot row costs.
func spreadPhase(ctx context.Context, o options, s *service, m merchant, dbURL string, tidy func() error, seq *atomic.Uint64) error {
	keys := []string{m.Secret}
	for i := 1; i < o.clients; i++ {
		mi, err := createMerchant(o, dbURL, fmt.Sprintf("Bench Co %d", i))
		if err != nil {
			return err
		}
		keys = append(keys, mi.Secret)
	}
	for _, k := range keys {
		if err := s.fund(k, "NGN"); err != nil {
			return err
		}
	}
	if err := tidy(); err != nil {
		return err
	}
	var spread phase
	withProfile(o, s, "withdraw-spread", func() {
		spread = attack(s, fmt.Sprintf("withdraw, %d merchants (no hot row)", len(keys)), o.clients, o.duration, spreadTargeter(s.URL, keys, m.Bank, true, seq), nil, nil)
	})
	fmt.Println(spread)
	return nil
}

// vacuumAnalyze vacuums and analyses every table of the service's
// database before a phase, as pgbench vacuums its own before each run.
func vacuumAnalyze(ctx context.Context, dbURL string) error {
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	t := time.Now()
	if _, err = db.ExecContext(ctx, "VACUUM (ANALYZE)"); err != nil {
		return err
	}
	fmt.Printf("    (service database vacuumed and analysed in %.2f s)\n", time.Since(t).Seconds())
	return nil
}
