package main

import (
	"bytes"
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

// seqBody is a request body built once around the places of a sequence
// number, so that each request only appends the number where it goes.
type seqBody struct{ parts [][]byte }

// seqMark stands for the sequence number in a body's template.
const seqMark = "{{seq}}"

func newSeqBody(template []byte) seqBody {
	parts := bytes.Split(template, []byte(seqMark))
	if len(parts) < 2 {
		panic("body template without " + seqMark)
	}
	return seqBody{parts}
}

func (b seqBody) with(seq uint64) []byte {
	n := 0
	for _, p := range b.parts {
		n += len(p) + 20
	}
	out := make([]byte, 0, n)
	for i, p := range b.parts {
		if i > 0 {
			out = strconv.AppendUint(out, seq, 10)
		}
		out = append(out, p...)
	}
	return out
}

// withdrawTargeter sends direct NGN withdrawals with distinct references.
func withdrawTargeter(base, key, bank string, idem bool, seq *atomic.Uint64) vegeta.Targeter {
	url := base + restPrefix + "/transactions/withdraw"
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

// gqlWithdrawBody is the body of a GraphQL withdrawal of reference ref,
// with idemKey as its idempotencyKey unless it is empty.
func gqlWithdrawBody(bank, ref, idemKey string) []byte {
	input := map[string]any{
		"beneficiary": map[string]string{"email": "ada@example.com", "bank": bank, "accountName": "Ada Obi", "accountNumber": "0123456789"},
		"amount":      "100", "currency": "NGN", "narration": "load test", "reference": ref,
	}
	if idemKey != "" {
		input["idempotencyKey"] = idemKey
	}
	b, err := json.Marshal(map[string]any{"query": gqlWithdrawQuery, "variables": map[string]any{"input": input}})
	if err != nil {
		panic(err)
	}
	return b
}

// gqlWithdrawTargeter sends the same withdrawal as withdrawTargeter through
// GraphQL (gqlWithdrawQuery); with idem, each carries a distinct
// idempotencyKey in its input, GraphQL's counterpart of the header.
func gqlWithdrawTargeter(base, key, bank string, idem bool, seq *atomic.Uint64) vegeta.Targeter {
	url := base + "/graphql"
	idemKey := ""
	if idem {
		idemKey = "gql-" + runID + "-" + seqMark
	}
	body := newSeqBody(gqlWithdrawBody(bank, "gql-"+runID+"-"+seqMark, idemKey))
	hdr := headers(key, false, "")
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
		urls[j] = base + restPrefix + "/transactions/" + r
	}
	return func(t *vegeta.Target) error {
		t.Method, t.URL, t.Header = http.MethodGet, urls[int(i.Add(1))%len(urls)], h
		return nil
	}
}

func rateTargeter(base, key string, idem bool, seq *atomic.Uint64) vegeta.Targeter {
	url := base + restPrefix + "/rates/create"
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
