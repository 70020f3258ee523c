package withdrawals_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/internal/banks"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/ledger"
	"merchantpay/internal/merchants"
	"merchantpay/internal/rails"
	"merchantpay/internal/rates"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/internal/withdrawals"
)

func sp(s string) *string { return &s }

func TestZZPerf(t *testing.T) {
	for _, worker := range []bool{false, true} {
		db := testdb.Open(t, testdb.PostgresURL(t))
		c := clock.Real{}
		l := ledger.New(db, c)
		dir, _ := banks.Load()
		ob := events.New(db, c)
		ft, _ := withdrawals.LoadFees("")
		r := rates.New(db, c, nil, rates.Options{})
		s := withdrawals.New(db, c, l, r, dir, ob, ft)
		tn := tenant.Tenant{MerchantID: "m1", Mode: "test"}
		ctx := merchants.WithPrincipal(tenant.With(context.Background(), tn), merchants.Principal{MerchantID: "m1", MerchantName: "M", Mode: "test"})
		if _, err := l.Fund(ctx, "NGN", decimal.New(100000000, 0)); err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithCancel(context.Background())
		if worker {
			sb, _ := rails.NewSandbox(dir, c, rails.SandboxOptions{})
			go s.Payouts(sb, withdrawals.PayoutOptions{Poll: 100 * time.Millisecond}).Run(wctx)
		}
		amt := decimal.New(100, 0)
		var mu sync.Mutex
		var lat []time.Duration
		var wg sync.WaitGroup
		start := time.Now()
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 250 {
					in := withdrawals.Input{Amount: &amt, Currency: sp("NGN"), Reference: sp(fmt.Sprintf("r-%d-%d", g, i)),
						Beneficiary: &withdrawals.Beneficiary{Email: sp("a@example.com"), Bank: sp("044"), AccountName: sp("Ada"), AccountNumber: sp("0123456789")}}
					t0 := time.Now()
					_, err := s.Withdraw(ctx, in)
					d := time.Since(t0)
					if err != nil {
						t.Error(err)
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		el := time.Since(start)
		cancel()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		t.Logf("worker=%v n=%d %.0f/s p50=%v p90=%v p99=%v max=%v", worker, len(lat), float64(len(lat))/el.Seconds(), lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)*99/100], lat[len(lat)-1])
	}
}
