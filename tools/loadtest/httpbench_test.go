package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The targeters build their bodies and headers once, around the places of
// the sequence number; each request must still be what formatting it whole
// gives.
func TestTargetersMatchFormattedRequests(t *testing.T) {
	const base, key, bank = "http://127.0.0.1:1", "sk_test_x", `04"4`
	for _, idem := range []bool{true, false} {
		var seq atomic.Uint64
		seq.Store(41)
		wd := withdrawTargeter(base, key, bank, idem, &seq)
		gql := gqlWithdrawTargeter(base, key, bank, idem, &seq)
		rate := rateTargeter(base, key, idem, &seq)
		want := func(prefix string, n uint64) http.Header {
			h := http.Header{"X-Api-Key": {key}, "Content-Type": {"application/json"}}
			if idem {
				h.Set("Idempotency-Key", fmt.Sprintf("%s-%s-%d", prefix, runID, n))
			}
			return h
		}
		for _, n := range []uint64{42, 43, 44} {
			var tg vegeta.Target
			switch n {
			case 42:
				if err := wd(&tg); err != nil {
					t.Fatal(err)
				}
				body := fmt.Sprintf(`{"beneficiary":{"email":"ada@example.com","bank":%q,"account_name":"Ada Obi","account_number":"0123456789"},`+
					`"amount":100,"currency":"NGN","narration":"load test","reference":"rest-%s-%d"}`, bank, runID, n)
				check(t, tg, http.MethodPost, base+restPrefix+"/transactions/withdraw", body, want("wd", n))
			case 43:
				if err := gql(&tg); err != nil {
					t.Fatal(err)
				}
				// GraphQL's key is in the input, not in a header.
				idemKey := ""
				if idem {
					idemKey = fmt.Sprintf("gql-%s-%d", runID, n)
				}
				b := gqlWithdrawBody(bank, fmt.Sprintf("gql-%s-%d", runID, n), idemKey)
				check(t, tg, http.MethodPost, base+"/graphql", string(b), http.Header{"X-Api-Key": {key}, "Content-Type": {"application/json"}})
			case 44:
				if err := rate(&tg); err != nil {
					t.Fatal(err)
				}
				check(t, tg, http.MethodPost, base+restPrefix+"/rates/create",
					`{"from_currency":"USDT","to_currency":"NGN","from_amount":10,"transaction_type":"swap"}`, want("rate", n))
			}
		}
	}
}

func check(t *testing.T, tg vegeta.Target, method, url, body string, h http.Header) {
	t.Helper()
	if tg.Method != method || tg.URL != url || string(tg.Body) != body || !reflect.DeepEqual(tg.Header, h) {
		t.Errorf("target %s %s %q %v, want %s %s %q %v", tg.Method, tg.URL, tg.Body, tg.Header, method, url, body, h)
	}
}

// percentiles gives, for each p, the smallest latency with at least p % of
// them at or below it, and the largest.
func TestPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 99, 100, 101, 1000, 12345} {
		lat := make([]time.Duration, n)
		for i := range lat {
			lat[i] = time.Duration(rng.IntN(5000)) * time.Microsecond
		}
		want := func(p int) time.Duration {
			var best time.Duration = -1
			for _, v := range lat {
				at := 0
				for _, w := range lat {
					if w <= v {
						at++
					}
				}
				if at*100 >= n*p && (best < 0 || v < best) {
					best = v
				}
			}
			return best
		}
		w50, w95, w99, wmax := want(50), want(95), want(99), slices.Max(lat)
		p50, p95, p99, max := percentiles(slices.Clone(lat))
		if p50 != w50 || p95 != w95 || p99 != w99 || max != wmax {
			t.Errorf("n=%d: got %v %v %v %v, want %v %v %v %v", n, p50, p95, p99, max, w50, w95, w99, wmax)
		}
	}
	if p50, p95, p99, max := percentiles(nil); p50|p95|p99|max != 0 {
		t.Errorf("no latencies: got %v %v %v %v", p50, p95, p99, max)
	}
}
