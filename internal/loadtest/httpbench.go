package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"merchantpay/rest"
)

// phase is the outcome of one closed-loop attack.
type phase struct {
	Name       string
	Requests   uint64
	OK         uint64
	Errors     uint64
	Throughput float64 // successful requests per second
	P50        time.Duration
	P95        time.Duration
	P99        time.Duration
	Max        time.Duration
	FirstError string
	CPU        string
}

func (p phase) String() string {
	s := fmt.Sprintf("%-34s %8.0f/s  p50 %6.2f ms  p95 %6.2f ms  p99 %6.2f ms  max %7.2f ms  requests %d  errors %d",
		p.Name, p.Throughput, ms(p.P50), ms(p.P95), ms(p.P99), ms(p.Max), p.Requests, p.Errors)
	if p.CPU != "" {
		s += "\n    " + p.CPU
	}
	if p.FirstError != "" {
		s += "\n    first error: " + p.FirstError
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// stdTransport makes attack use net/http's Transport (see leanTransport).
var stdTransport bool

// The load generator's Go runtime during an attack (see attack).
const (
	attackProcs = 1   // GOMAXPROCS
	attackGOGC  = 800 // its live heap is a few MB: a GC every 40 MB or so
)

// errBody is how much of an answer's body an error message quotes.
const errBody = 300

// attack runs clients closed-loop workers against tr for d: each sends its
// next request when its last one is answered (vegeta at rate 0 with a
// fixed pool of workers). check judges each answer beyond its status; keep
// sees every successful one. Without either, vegeta reads no more of a
// body than an error message quotes (the rest is still read, and dropped).
//
// The load generator shares the machine with the service and PostgreSQL,
// so what it spends beyond the HTTP work itself is kept small: latencies
// go into a slice and are sorted once at the end (not vegeta.Metrics per
// result), the garbage collector runs rarely during the attack (its heap
// is small, its allocation rate high), and the Go scheduler gets one P
// (the workers wait on the network; with two, the runtime keeps waking a
// second thread for every hand-over).
func attack(s *service, name string, clients int, d time.Duration, tr vegeta.Targeter, check func(*vegeta.Result) error, keep func(*vegeta.Result)) phase {
	opts := []func(*vegeta.Attacker){
		vegeta.Workers(uint64(clients)), vegeta.MaxWorkers(uint64(clients)),
		vegeta.Connections(clients), vegeta.KeepAlive(true), vegeta.HTTP2(false),
		vegeta.Timeout(30 * time.Second),
	}
	if check == nil && keep == nil {
		opts = append(opts, vegeta.MaxBody(errBody))
	}
	if !stdTransport {
		// After the options above, which set up the Transport this replaces.
		lean := newLeanTransport(clients, 30*time.Second)
		defer lean.closeIdle()
		opts = append(opts, vegeta.Client(&http.Client{Transport: lean}))
	}
	a := vegeta.NewAttacker(opts...)
	out := phase{Name: name}
	pid := 0
	if s != nil {
		pid = s.cmd.Process.Pid
	}
	defer debug.SetGCPercent(debug.SetGCPercent(attackGOGC))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(attackProcs))
	lat := make([]time.Duration, 0, 1<<16)
	var first, last time.Time // the first request's start, the last answer's end
	before := sampleCPU(pid)
	for res := range a.Attack(tr, vegeta.Rate{Freq: 0}, d, name) {
		var err error
		if res.Error != "" {
			err = fmt.Errorf("%s: %s", res.Error, truncate(res.Body))
		} else if check != nil {
			err = check(res)
		}
		if err != nil {
			out.Errors++
			if out.FirstError == "" {
				out.FirstError = err.Error()
			}
		} else {
			out.OK++
			if keep != nil {
				keep(res)
			}
		}
		lat = append(lat, res.Latency)
		if first.IsZero() || res.Timestamp.Before(first) {
			first = res.Timestamp
		}
		if end := res.End(); end.After(last) {
			last = end
		}
	}
	out.CPU = cpuSplit(before, sampleCPU(pid))
	out.Requests = uint64(len(lat))
	if span := last.Sub(first); span > 0 {
		out.Throughput = float64(out.OK) / span.Seconds()
	}
	out.P50, out.P95, out.P99, out.Max = percentiles(lat)
	return out
}

// percentiles sorts lat and returns its 50th, 95th and 99th percentiles
// (nearest rank) and its maximum.
func percentiles(lat []time.Duration) (p50, p95, p99, max time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	rank := func(p int) time.Duration {
		// The smallest latency with at least p % of them at or below it.
		return lat[(len(lat)*p+99)/100-1]
	}
	return rank(50), rank(95), rank(99), lat[len(lat)-1]
}

func truncate(b []byte) string {
	if len(b) > errBody {
		b = b[:errBody]
	}
	return string(b)
}

// runID keeps references and idempotency keys distinct across runs.
var runID = fmt.Sprintf("%x", time.Now().UnixNano()%0xffffffff)

// headers makes a targeter's request headers: the API key, a JSON body
// and, with idem, a distinct Idempotency-Key per request. vegeta copies
// them into each request, so the fixed ones are shared by all.
func headers(key string, idem bool, prefix string) func(seq uint64) http.Header {
	keyV, ctV := []string{key}, []string{"application/json"}
	if !idem {
		h := http.Header{"X-Api-Key": keyV, "Content-Type": ctV}
		return func(uint64) http.Header { return h }
	}
	idemPrefix := prefix + "-" + runID + "-"
	return func(seq uint64) http.Header {
		return http.Header{"X-Api-Key": keyV, "Content-Type": ctV,
			"Idempotency-Key": {idemPrefix + strconv.FormatUint(seq, 10)}}
	}
}

// seqBody is a request body built once around the place of a sequence
// number, so that each request only appends the number.
type seqBody struct{ before, after []byte }

// seqMark stands for the sequence number in a body's template.
const seqMark = "{{seq}}"

func newSeqBody(template []byte) seqBody {
	before, after, ok := bytes.Cut(template, []byte(seqMark))
	if !ok || bytes.Contains(after, []byte(seqMark)) {
		panic("body template without exactly one " + seqMark)
	}
	return seqBody{before, after}
}

func (b seqBody) with(seq uint64) []byte {
	out := make([]byte, 0, len(b.before)+20+len(b.after))
	out = append(out, b.before...)
	out = strconv.AppendUint(out, seq, 10)
	return append(out, b.after...)
}

// withdrawTargeter sends direct NGN withdrawals with distinct references.
func withdrawTargeter(base, key, bank string, idem bool, seq *atomic.Uint64) vegeta.Targeter {
	url := base + rest.Prefix + "/transactions/withdraw"
	body := newSeqBody(fmt.Appendf(nil, `{"beneficiary":{"email":"ada@example.com","bank":%q,"account_name":"Ada Obi","account_number":"0123456789"},`+
		`"amount":100,"currency":"NGN","narration":"load test","reference":"rest-%s-%s"}`, bank, runID, seqMark))
	hdr := headers(key, idem, "wd")
	return func(t *vegeta.Target) error {
		n := seq.Add(1)
		t.Method, t.URL, t.Body, t.Header = http.MethodPost, url, body.with(n), hdr(n)
		return nil
	}
}

// spreadTargeter sends the withdrawals of withdrawTargeter for keys in turn.
func spreadTargeter(base string, keys []string, bank string, idem bool, seq *atomic.Uint64) vegeta.Targeter {
	per := make([]vegeta.Targeter, len(keys))
	for i, k := range keys {
		per[i] = withdrawTargeter(base, k, bank, idem, seq)
	}
	var turn atomic.Uint64
	return func(t *vegeta.Target) error { return per[int(turn.Add(1))%len(per)](t) }
}

// gqlWithdrawQuery is the GraphQL withdrawal, its input in a variable as
// client libraries send it: the text is the same for every request, so the
// service parses and validates it once (its query cache), as it would for
// a merchant's client.
const gqlWithdrawQuery = `mutation Withdraw($input: WithdrawInput!) { withdraw(input: $input) { reference } }`

// gqlWithdrawBody is the body of a GraphQL withdrawal of reference ref.
func gqlWithdrawBody(bank, ref string) []byte {
	b, err := json.Marshal(map[string]any{"query": gqlWithdrawQuery, "variables": map[string]any{"input": map[string]any{
		"beneficiary": map[string]string{"email": "ada@example.com", "bank": bank, "accountName": "Ada Obi", "accountNumber": "0123456789"},
		"amount":      "100", "currency": "NGN", "narration": "load test", "reference": ref,
	}}})
	if err != nil {
		panic(err)
	}
	return b
}

// gqlWithdrawTargeter sends the same withdrawal as withdrawTargeter through
// GraphQL (gqlWithdrawQuery).
func gqlWithdrawTargeter(base, key, bank string, idem bool, seq *atomic.Uint64) vegeta.Targeter {
	url := base + "/graphql"
	body := newSeqBody(gqlWithdrawBody(bank, "gql-"+runID+"-"+seqMark))
	hdr := headers(key, idem, "gql")
	return func(t *vegeta.Target) error {
		n := seq.Add(1)
		t.Method, t.URL, t.Body, t.Header = http.MethodPost, url, body.with(n), hdr(n)
		return nil
	}
}

func getTargeter(base, key string, refs []string) vegeta.Targeter {
	var i atomic.Uint64
	h := http.Header{"X-Api-Key": {key}}
	urls := make([]string, len(refs))
	for j, r := range refs {
		urls[j] = base + rest.Prefix + "/transactions/" + r
	}
	return func(t *vegeta.Target) error {
		t.Method, t.URL, t.Header = http.MethodGet, urls[int(i.Add(1))%len(urls)], h
		return nil
	}
}

func rateTargeter(base, key string, idem bool, seq *atomic.Uint64) vegeta.Targeter {
	url := base + rest.Prefix + "/rates/create"
	body := []byte(`{"from_currency":"USDT","to_currency":"NGN","from_amount":10,"transaction_type":"swap"}`)
	hdr := headers(key, idem, "rate")
	return func(t *vegeta.Target) error {
		n := seq.Add(1)
		t.Method, t.URL, t.Body, t.Header = http.MethodPost, url, body, hdr(n)
		return nil
	}
}

func gqlCheck(r *vegeta.Result) error {
	if bytes.Contains(r.Body, []byte(`"errors"`)) {
		return fmt.Errorf("GraphQL errors: %s", truncate(r.Body))
	}
	return nil
}

// withProfile records the service's CPU profile of a phase when asked, and
// the load generator's own (this process) beside it.
func withProfile(o options, s *service, name string, fn func()) {
	if o.profileDir == "" {
		fn()
		return
	}
	var wg sync.WaitGroup
	path := filepath.Join(o.profileDir, name+".cpu.pprof")
	for _, kind := range []string{"profile", "allocs"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := path
			if kind == "allocs" {
				p = filepath.Join(o.profileDir, name+".allocs.pprof")
			}
			if err := s.profile(kind, p, o.duration-time.Second); err != nil {
				fmt.Fprintln(os.Stderr, "profile:", err)
			}
		}()
	}
	own := filepath.Join(o.profileDir, name+".loadgen.cpu.pprof")
	f, err := os.Create(own)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	fn()
	if err == nil {
		pprof.StopCPUProfile()
		err = f.Close()
	}
	wg.Wait()
	if err != nil {
		fmt.Fprintln(os.Stderr, "load generator profile:", err)
		own = "none"
	}
	fmt.Printf("    profile: %s, load generator: %s\n", path, own)
}

func httpSuite(ctx context.Context, o options, p *pg) error {
	fmt.Printf("\n== http: %d closed-loop clients, %s per phase, Idempotency-Key on POSTs: %v, LOG_LEVEL=%s, load generator GOMAXPROCS %d\n",
		o.clients, o.duration, o.idemKeys, o.logLevel, attackProcs)
	pgb, err := p.newPgbench(ctx, o.clients, o.duration)
	if err != nil {
		return err
	}

	s, m, dbURL, err := setup(ctx, o, p, "http", !o.noWorkers)
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
	// withdrawals are the GET phase's references if the withdrawal phase
	// is not run.
	attack(s, "warm-up", o.clients, 2*time.Second, withdrawTargeter(s.URL, m.Secret, bank, o.idemKeys, &seq), nil, keepRef)
	// Then statistics, as pgbench -i leaves its tables analysed: without
	// them the planner guesses, and the service's prepared statements keep
	// the plans it made for empty tables (the payout worker's claim read
	// the whole transactions table at every pass) until autovacuum's first
	// ANALYZE, a minute or more into a fresh database's life.
	if err := analyze(ctx, dbURL); err != nil {
		return err
	}

	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	// quiet waits for the background work of the phases before (payouts
	// submitted and settled 3 s later, events fanned out, e-mails) to end,
	// so that a phase is not charged with it: pgbench runs on a quiet
	// server. A withdrawal phase still carries its own.
	quiet := func() error {
		if o.noWorkers {
			return nil
		}
		t := time.Now()
		if err := quiesce(ctx, db, 2*time.Minute); err != nil {
			return err
		}
		fmt.Printf("    (quiet after %.2f s)\n", time.Since(t).Seconds())
		return nil
	}

	// baseline runs one of pgbench's workloads on the quiet server. Each
	// ratio's pgbench figure is the mean of a run just before and one
	// just after its phase: this machine's speed drifts by up to 2x within
	// minutes, so a figure taken at the start of the run was measured on a
	// different machine, in effect, than the phase it is compared with.
	// The service is idle during these runs (its workers poll every
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
		fmt.Printf("%-34s %8.0f tps  (latency average %.2f ms)  [%s]  service meanwhile %.2f cores\n", name, r.TPS, r.Latency, r.Command,
			(c1.service-c0.service).Seconds()/c1.at.Sub(c0.at).Seconds())
		return r, nil
	}
	around := func(name string, selectOnly bool, fn func() error) (pgbenchResult, error) {
		before, err := baseline(name+", before", selectOnly)
		if err != nil {
			return before, err
		}
		if err := fn(); err != nil {
			return before, err
		}
		after, err := baseline(name+", after", selectOnly)
		return pgbenchResult{TPS: (before.TPS + after.TPS) / 2}, err
	}

	var wd, get, rate, gql phase
	var tpcb, sel pgbenchResult
	if o.phase("withdraw") {
		tpcb, err = around("pgbench TPC-B-like", false, func() error {
			withProfile(o, s, "withdraw", func() {
				wd = attack(s, "POST /transactions/withdraw", o.clients, o.duration, withdrawTargeter(s.URL, m.Secret, bank, o.idemKeys, &seq), nil, keepRef)
			})
			fmt.Println(wd)
			if len(refs) == 0 {
				return fmt.Errorf("no withdrawal succeeded")
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// Autovacuum analyses a table once a tenth of it changed, checking every
	// minute; a database up for longer than this run has statistics of its
	// present size, so the harness analyses again here (before, a look-up
	// by reference walked the merchant's index).
	if err := analyze(ctx, dbURL); err != nil {
		return err
	}
	if o.phase("get") {
		sel, err = around("pgbench select-only", true, func() error {
			withProfile(o, s, "get", func() {
				get = attack(s, "GET /transactions/{ref}", o.clients, o.duration, getTargeter(s.URL, m.Secret, refs), nil, nil)
			})
			fmt.Println(get)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if o.phase("rates") {
		if err := quiet(); err != nil {
			return err
		}
		withProfile(o, s, "rates", func() {
			rate = attack(s, "POST /rates/create", o.clients, o.duration, rateTargeter(s.URL, m.Secret, o.idemKeys, &seq), nil, nil)
		})
		fmt.Println(rate)
	}
	if o.phase("graphql") {
		if err := quiet(); err != nil {
			return err
		}
		withProfile(o, s, "graphql-withdraw", func() {
			gql = attack(s, "GraphQL mutation withdraw", o.clients, o.duration, gqlWithdrawTargeter(s.URL, m.Secret, bank, o.idemKeys, &seq), gqlCheck, nil)
		})
		fmt.Println(gql)
	}
	if !o.phase("spread") {
		return report(tpcb, sel, wd, get, gql, rate)
	}

	// The same withdrawals spread over as many merchants as clients: no
	// balance row is shared, so the gap to the first figure is what the hot
	// row costs.
	keys := []string{m.Secret}
	for i := 1; i < o.clients; i++ {
		mi, err := createMerchant(dbURL, fmt.Sprintf("Bench Co %d", i))
		if err != nil {
			return err
		}
		if _, err := s.call("POST", "/sandbox/balances/fund", mi.Secret, map[string]any{"currency": "NGN", "amount": 10_000_000_000}, nil); err != nil {
			return err
		}
		keys = append(keys, mi.Secret)
	}
	if err := quiet(); err != nil {
		return err
	}
	var spread phase
	withProfile(o, s, "withdraw-spread", func() {
		spread = attack(s, fmt.Sprintf("withdraw, %d merchants (no hot row)", len(keys)), o.clients, o.duration, spreadTargeter(s.URL, keys, bank, o.idemKeys, &seq), nil, nil)
	})
	fmt.Println(spread)

	return report(tpcb, sel, wd, get, gql, rate)
}

// report prints the ratios of the phases that ran against their targets.
func report(tpcb, sel pgbenchResult, wd, get, gql, rate phase) error {
	fmt.Println("\ntargets:")
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT MET"
	}
	fmt.Printf("  (each against the mean of pgbench's runs just before and after its phase: TPC-B-like %.0f tps, select-only %.0f tps)\n", tpcb.TPS, sel.TPS)
	if tpcb.TPS > 0 {
		r1 := wd.Throughput / tpcb.TPS
		fmt.Printf("  withdrawals / TPC-B           = %5.2f (target >= 0.50), p99 %.2f ms (<= 25), errors %d (0): %s\n",
			r1, ms(wd.P99), wd.Errors, verdict(r1 >= 0.5 && wd.P99 <= 25*time.Millisecond && wd.Errors == 0))
	}
	if sel.TPS > 0 {
		r2 := get.Throughput / sel.TPS
		fmt.Printf("  GET transaction / select-only = %5.2f (target >= 0.25): %s\n", r2, verdict(r2 >= 0.25 && get.Errors == 0))
	}
	if wd.Throughput > 0 && gql.Throughput > 0 {
		r3 := gql.Throughput / wd.Throughput
		fmt.Printf("  GraphQL / REST withdrawal     = %5.2f (target >= 0.90): %s\n", r3, verdict(r3 >= 0.9 && gql.Errors == 0))
	}
	if rate.Errors > 0 {
		fmt.Printf("  POST /rates/create had %d errors\n", rate.Errors)
	}
	return nil
}

func analyze(ctx context.Context, dbURL string) error {
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "ANALYZE")
	return err
}
