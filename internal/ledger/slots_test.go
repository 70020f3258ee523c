package ledger_test

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"testing"

	"merchantpay/ent/balanceslot"
	"merchantpay/internal/apperr"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/tenant"
)

// slots returns the available amounts of acme's NGN slots, by slot.
func (f *fixture) slots(t *testing.T) []int64 {
	t.Helper()
	rows, err := f.db.Reader().BalanceSlot.Query().
		Where(balanceslot.AccountID(ledger.MerchantAccount(acme, money.NGN).ID())).All(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID < rows[j].ID })
	out := make([]int64, len(rows))
	for i, r := range rows {
		out[i] = r.Available
	}
	return out
}

// A payout's debit on PostgreSQL takes its amount from the next slot of
// the balance that covers it; when none does, the whole balance is locked
// and spread again, refusing only what it cannot cover; any other decrease
// the row cannot cover gathers the slots back. Balances count the slots,
// and a credit cannot take the whole past an int64. SQLite has no slots:
// the same payouts come out the same.
func TestSlots(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		pg := f.db.IsPostgres()
		f.credit(t, acme, money.NGN, 9_000)
		// No slot yet: the balance is spread.
		if err := f.payout(t, 100, "k1"); err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.NGN, 8_900, 0)
		if got, want := fmt.Sprint(f.slots(t)), "[988 988 988 988 988 988 988 988]"; pg && got != want {
			t.Fatalf("slots after spreading 8,900: %s, want %s (the row keeps 996)", got, want)
		}
		// Another decrease than a payout's works on the row: its 996
		// cover 990, though no slot would, and the slots stay as they are.
		if _, err := f.l.Debit(f.ctx, nil, ledger.Posting{Memo: "fee"}, acme, ledger.PayoutsInFlight, money.NGN, 990); err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.NGN, 7_910, 0)
		if got := fmt.Sprint(f.slots(t)); pg && got != "[988 988 988 988 988 988 988 988]" {
			t.Fatalf("slots after a debit the row covered: %s", got)
		}
		// A slot covers 500: one slot gives it, the others stay.
		if err := f.payout(t, 500, "k2"); err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.NGN, 7_410, 0)
		if pg {
			full, less := 0, 0
			for _, v := range f.slots(t) {
				switch v {
				case 988:
					full++
				case 488:
					less++
				}
			}
			if full != 7 || less != 1 {
				t.Fatalf("slots after a payout one slot covers: %v", f.slots(t))
			}
		}
		// No slot covers 1,000 but the balance does: spread again.
		if err := f.payout(t, 1_000, "k3"); err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.NGN, 6_410, 0)
		if got, want := fmt.Sprint(f.slots(t)), "[712 712 712 712 712 712 712 712]"; pg && got != want {
			t.Fatalf("slots after spreading 6,410: %s, want %s", got, want)
		}
		// Another decrease than a payout's, which the row cannot cover,
		// gathers the slots into the row.
		if _, err := f.l.Debit(f.ctx, nil, ledger.Posting{Memo: "swap"}, acme, ledger.FX, money.NGN, 6_000); err != nil {
			t.Fatal(err)
		}
		f.expect(t, acme, money.NGN, 410, 0)
		if got := fmt.Sprint(f.slots(t)); pg && got != "[0 0 0 0 0 0 0 0]" {
			t.Fatalf("slots after a gathering debit: %s", got)
		}
		// The whole balance refuses one unit more than it holds.
		if err := f.payout(t, 411, "k4"); !apperr.Is(err, apperr.InsufficientBalance) {
			t.Fatalf("payout over the balance: %v", err)
		}
		if err := f.payout(t, 150, "k5"); err != nil {
			t.Fatal(err)
		}
		bs, err := f.l.Balances(tenant.With(f.ctx, acme))
		if err != nil || bs[0].Currency != money.NGN || bs[0].Available != 260 {
			t.Fatalf("balances: %+v %v", bs, err)
		}
		if err := ledger.Check(f.ctx, f.db); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}

		// With 260 spread, the row holds a ninth: a credit the row could
		// take but the whole balance could not is refused.
		_, err = f.l.Credit(f.ctx, nil, ledger.Posting{}, acme, ledger.SandboxFunding, money.NGN, math.MaxInt64-260)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.l.Credit(f.ctx, nil, ledger.Posting{}, acme, ledger.SandboxFunding, money.NGN, 1)
		if apperr.KindOf(err) != apperr.Validation {
			t.Fatalf("credit past the largest balance with slots: %v", err)
		}
		f.expect(t, acme, money.NGN, math.MaxInt64, 0)
	})
}

// Many payouts at once against a balance that covers half of them: exactly
// half go through, whichever slots they hit, and the balance ends at zero.
func TestSlotsConcurrentPayouts(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		const share, takers = 1_234, 200
		f.credit(t, acme, money.NGN, takers/2*share)
		var wg sync.WaitGroup
		var mu sync.Mutex
		count := map[string]int{}
		for i := range takers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := f.payout(t, share, fmt.Sprint("c", i))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					count["ok"]++
				case apperr.Is(err, apperr.InsufficientBalance):
					count["refused"]++
				default:
					count[err.Error()]++
				}
			}()
		}
		wg.Wait()
		if count["ok"] != takers/2 || count["refused"] != takers/2 {
			t.Fatalf("outcomes %v", count)
		}
		f.expect(t, acme, money.NGN, 0, 0)
		if err := ledger.Check(f.ctx, f.db); err != nil {
			t.Fatal(err)
		}
	})
}

// A balance read while payouts spread it over the slots and other debits
// gather it back sees one state of it, never the row of one and the slots
// of another (which would count the money moved twice, or not at all).
func TestSlotsBalanceReadsAreConsistent(t *testing.T) {
	each(t, func(t *testing.T, f *fixture) {
		// Each round: +60,000, a payout of 30,000 (spread: the row keeps a
		// ninth), a debit of 30,000 (gather): 0, 60,000 and 30,000 only.
		valid := map[int64]bool{0: true, 60_000: true, 30_000: true}
		done := make(chan struct{})
		var wg sync.WaitGroup
		var mu sync.Mutex
		var bad []int64
		reads := 0
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := tenant.With(f.ctx, acme)
				for {
					select {
					case <-done:
						return
					default:
					}
					bs, err := f.l.Balances(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					reads++
					if v := bs[0].Available; !valid[v] {
						bad = append(bad, v)
					}
					mu.Unlock()
				}
			}()
		}
		for round := range 40 {
			f.credit(t, acme, money.NGN, 60_000)
			if err := f.payout(t, 30_000, fmt.Sprint("r", round)); err != nil {
				t.Fatal(err)
			}
			if _, err := f.l.Debit(f.ctx, nil, ledger.Posting{Memo: "swap"}, acme, ledger.FX, money.NGN, 30_000); err != nil {
				t.Fatal(err)
			}
		}
		close(done)
		wg.Wait()
		if len(bad) > 0 {
			t.Fatalf("%d of %d reads saw no state the balance was in, e.g. %v", len(bad), reads, bad[:min(len(bad), 5)])
		}
		f.expect(t, acme, money.NGN, 0, 0)
	})
}
