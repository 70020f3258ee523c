package ledger

import (
	"slices"
	"testing"

	"merchantpay/internal/money"
	"merchantpay/internal/tenant"
)

// Two postings that change the same balance rows lock them in the same
// order, whatever they do to each: a swap one way raises one currency and
// lowers the other, a swap the other way the reverse. Locking them in
// opposite orders deadlocked on PostgreSQL.
func TestPlanLocksRowsInOneOrder(t *testing.T) {
	m := tenant.Tenant{MerchantID: "11111111-1111-4111-8111-111111111111", Mode: tenant.Test}
	usdt, ngn := MerchantAccount(m, money.USDT), MerchantAccount(m, money.NGN)
	swap := func(from, to Account, fromAmount, toAmount int64) *Posting {
		return &Posting{ID: "p", Entries: []Entry{
			{Account: from, Amount: -fromAmount},
			{Account: SystemAccount(m.Mode, from.Currency, FX), Amount: fromAmount},
			{Account: SystemAccount(m.Mode, to.Currency, FX), Amount: -toAmount},
			{Account: to, Bucket: Pending, Amount: toAmount},
		}}
	}
	order := func(p *Posting) []string {
		t.Helper()
		ds, err := plan(p)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, d := range ds {
			ids = append(ids, d.acct.ID())
		}
		return ids
	}
	one, other := order(swap(usdt, ngn, 100, 160000)), order(swap(ngn, usdt, 160000, 100))
	if len(one) != 2 || !slices.Equal(one, other) {
		t.Errorf("USDT→NGN locks %v, NGN→USDT %v", one, other)
	}
}
