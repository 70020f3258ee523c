package rest_test

import (
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

func TestZZWithdrawPerfTmp(t *testing.T) {
	e := servertest.New(t, testdb.PostgresURL(t), servertest.With("JOBS_POLL_INTERVAL", "100ms"))
	m := e.Merchant("Perf Co")
	b := wdBankCodes(t, e, m.TestSecret)
	wdFund(e, m.TestSecret, "NGN", 100000000)
	const clients, per = 8, 250
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				t0 := time.Now()
				r := wdPost(e, m.TestSecret, map[string]any{"beneficiary": ngBen(b.ng), "amount": 100, "currency": "NGN", "reference": fmt.Sprintf("p-%d-%d", c, i)})
				d := time.Since(t0)
				if r.Status != 200 {
					t.Errorf("%s", r.Body)
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("n=%d %.0f/s p50=%v p90=%v p99=%v max=%v", len(lat), float64(len(lat))/el.Seconds(), lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)*99/100], lat[len(lat)-1])
}
