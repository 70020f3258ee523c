package server_test

import (
	"slices"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/server/servertest"
)

const historyGQL = `query($c: String!, $f: Int, $a: String) { balanceHistory(currency: $c, first: $f, after: $a) {
	edges { cursor node { id createdAt amount balanceAfter currency transactionReference description } }
	pageInfo { hasNextPage endCursor } } }`

func dec(t *testing.T, v any) decimal.Decimal {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		s = string(v.(interface{ String() string }).String())
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("not a decimal: %v", v)
	}
	return d
}

// dashboardMoney makes two deposits and a withdrawal of NGN for m and
// returns the deposits' and the withdrawal's references.
func dashboardMoney(t *testing.T, e *servertest.Env, key string) (deposits []string, withdrawal string) {
	t.Helper()
	acc := e.REST("POST", "/accounts", key, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
	deposits = append(deposits, depositTo(t, e, key, acc, "100"))
	e.Clock.Advance(time.Second)
	deposits = append(deposits, depositTo(t, e, key, acc, "250"))
	e.Clock.Advance(time.Second)
	wd := e.REST("POST", "/transactions/withdraw", key, map[string]any{"amount": 50, "currency": "NGN", "reference": "Pay-1",
		"beneficiary": map[string]any{"email": "ada@example.com", "bank": "058", "account_name": "Ada Obi", "account_number": "0123456789"}}).Expect(200).Data()
	return deposits, wd["reference"].(string)
}

// balanceHistory lists NGN's entries newest first with the balance after
// each, a page at a time, over GraphQL and REST alike.
func TestBalanceHistory(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m, other := e.Merchant("Hist Co"), e.Merchant("Other")
		deps, wd := dashboardMoney(t, e, m.TestSecret)
		var entries []map[string]any
		after := any(nil)
		for pages := 0; ; pages++ {
			conn := e.GQL(m.TestSecret, historyGQL, map[string]any{"c": "NGN", "f": 2, "a": after}).GQLData()["balanceHistory"].(map[string]any)
			for _, edge := range conn["edges"].([]any) {
				entries = append(entries, edge.(map[string]any)["node"].(map[string]any))
			}
			info := conn["pageInfo"].(map[string]any)
			if info["hasNextPage"] != true {
				break
			}
			if pages > 5 {
				t.Fatal("pages never end")
			}
			after = info["endCursor"]
		}
		if len(entries) < 3 {
			t.Fatalf("%d entries: %v", len(entries), entries)
		}
		available := dec(t, balances(t, e, m.TestSecret)["NGN"]["available"])
		if got := dec(t, entries[0]["balanceAfter"]); !got.Equal(available) {
			t.Errorf("newest balanceAfter %s, balance %s", got, available)
		}
		for i := 1; i < len(entries); i++ {
			want := dec(t, entries[i-1]["balanceAfter"]).Sub(dec(t, entries[i-1]["amount"]))
			if got := dec(t, entries[i]["balanceAfter"]); !got.Equal(want) {
				t.Errorf("entry %d: balanceAfter %s, want %s", i, got, want)
			}
		}
		last := entries[len(entries)-1]
		if !dec(t, last["balanceAfter"]).Equal(dec(t, last["amount"])) || last["transactionReference"] != deps[0] {
			t.Errorf("oldest entry: %v (first deposit %s)", last, deps[0])
		}
		if entries[0]["transactionReference"] != wd || !dec(t, entries[0]["amount"]).IsNegative() {
			t.Errorf("newest entry: %v (withdrawal %s)", entries[0], wd)
		}
		// REST: the same entries, in the list envelope.
		r := e.REST("GET", "/balances/NGN/history?limit=100", m.TestSecret, nil).Expect(200)
		list := r.List()
		if len(list) != len(entries) {
			t.Fatalf("REST lists %d entries, GraphQL %d", len(list), len(entries))
		}
		for i, x := range list {
			x := x.(map[string]any)
			if x["id"] != entries[i]["id"] || !dec(t, x["balance_after"]).Equal(dec(t, entries[i]["balanceAfter"])) {
				t.Errorf("REST entry %d: %v; GraphQL %v", i, x, entries[i])
			}
		}
		r2 := e.REST("GET", "/balances/NGN/history?limit=1", m.TestSecret, nil).Expect(200)
		next, _ := r2.JSON["meta"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			t.Fatalf("no next cursor: %s", r2.Body)
		}
		if got := e.REST("GET", "/balances/NGN/history?limit=1&cursor="+next, m.TestSecret, nil).Expect(200).List(); got[0].(map[string]any)["id"] != entries[1]["id"] {
			t.Errorf("second REST page: %v", got)
		}
		// Nobody else's entries, and bad input named.
		if got := e.GQL(other.TestSecret, historyGQL, map[string]any{"c": "NGN"}).GQLData()["balanceHistory"].(map[string]any)["edges"].([]any); len(got) != 0 {
			t.Errorf("another merchant sees %v", got)
		}
		if got := e.GQL(m.LiveSecret, historyGQL, map[string]any{"c": "NGN"}).GQLData()["balanceHistory"].(map[string]any)["edges"].([]any); len(got) != 0 {
			t.Errorf("live mode sees %v", got)
		}
		if r := e.GQL(m.TestSecret, historyGQL, map[string]any{"c": "ngn", "a": "nope"}); r.Code() != "VALIDATION_ERROR" ||
			!slices.Contains(gqlFields(r), "currency") || !slices.Contains(gqlFields(r), "after") {
			t.Errorf("bad currency and cursor: %s", r.Body)
		}
		if r := e.REST("GET", "/balances/XYZ/history", m.TestSecret, nil); r.Status != 400 || !slices.Contains(r.Fields(), "currency") {
			t.Errorf("REST bad currency: %d %s", r.Status, r.Body)
		}
	})
}

const filteredGQL = `query($f: TransactionFilter) { transactions(first: 100, filter: $f) { edges { node { reference type currency } } } }`

func refsOf(t *testing.T, r *servertest.Resp) []string {
	t.Helper()
	var out []string
	for _, edge := range r.GQLData()["transactions"].(map[string]any)["edges"].([]any) {
		out = append(out, edge.(map[string]any)["node"].(map[string]any)["reference"].(string))
	}
	return out
}

// The transaction filters (currency, dates, either reference) over GraphQL
// and REST; a transaction's events; today's volume.
func TestTransactionFiltersEventsAndVolume(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Filter Co")
		start := e.Clock.Now()
		deps, wd := dashboardMoney(t, e, m.TestSecret)
		list := func(f map[string]any) []string {
			return refsOf(t, e.GQL(m.TestSecret, filteredGQL, map[string]any{"f": f}))
		}
		if got := list(map[string]any{"search": "pay-1"}); !slices.Equal(got, []string{wd}) {
			t.Errorf("search by merchant reference: %v", got)
		}
		if got := list(map[string]any{"search": deps[1]}); !slices.Equal(got, []string{deps[1]}) {
			t.Errorf("search by reference: %v", got)
		}
		if got := list(map[string]any{"type": "DEPOSIT", "currency": "NGN"}); !slices.Equal(got, []string{deps[1], deps[0]}) {
			t.Errorf("NGN deposits: %v", got)
		}
		if got := list(map[string]any{"currency": "GHS"}); len(got) != 0 {
			t.Errorf("GHS: %v", got)
		}
		from := start.Add(time.Second).UTC().Format(time.RFC3339Nano)
		to := start.Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
		if got := list(map[string]any{"createdFrom": from, "createdTo": to}); !slices.Equal(got, []string{deps[1]}) {
			t.Errorf("from %s to %s (exclusive): %v", from, to, got)
		}
		if r := e.GQL(m.TestSecret, filteredGQL, map[string]any{"f": map[string]any{"createdFrom": to, "createdTo": from, "currency": "XYZ"}}); r.Code() != "VALIDATION_ERROR" ||
			!slices.Contains(gqlFields(r), "filter.createdTo") || !slices.Contains(gqlFields(r), "filter.currency") {
			t.Errorf("bad filter: %s", r.Body)
		}
		rest := e.REST("GET", "/transactions?search=PAY-1&currency=NGN&created_from="+from, m.TestSecret, nil).Expect(200).List()
		if len(rest) != 1 || rest[0].(map[string]any)["reference"] != wd {
			t.Errorf("REST filter: %v", rest)
		}
		if r := e.REST("GET", "/transactions?created_to=yesterday", m.TestSecret, nil); r.Status != 400 || !slices.Contains(r.Fields(), "created_to") {
			t.Errorf("REST bad time: %d %s", r.Status, r.Body)
		}

		// The deposit's events: deposit.success, with its deliveries.
		one := e.GQL(m.TestSecret, `query($r: String!) { transaction(reference: $r) { events { id event deliveries { id } } } }`,
			map[string]any{"r": deps[0]}).GQLData()["transaction"].(map[string]any)
		evs := one["events"].([]any)
		if len(evs) != 1 || evs[0].(map[string]any)["event"] != "deposit.success" {
			t.Errorf("deposit's events: %v", evs)
		}

		// Today's volume: 350 in, the withdrawal's debit out, three
		// transactions.
		wdFrom := dec(t, e.REST("GET", "/transactions/"+wd, m.TestSecret, nil).Expect(200).Data()["from_amount"])
		vols := e.GQL(m.TestSecret, `{ volumeToday { currency incoming outgoing count } }`, nil).GQLData()["volumeToday"].([]any)
		for _, v := range vols {
			v := v.(map[string]any)
			if v["currency"] != "NGN" {
				if n, _ := v["count"].(interface{ String() string }); v["incoming"] != "0" || v["outgoing"] != "0" || n == nil || n.String() != "0" {
					t.Errorf("volume of %v: %v", v["currency"], v)
				}
				continue
			}
			if !dec(t, v["incoming"]).Equal(decimal.NewFromInt(350)) || !dec(t, v["outgoing"]).Equal(wdFrom) {
				t.Errorf("NGN volume: %v (withdrawal from_amount %s)", v, wdFrom)
			}
			if n, _ := v["count"].(interface{ String() string }); n == nil || n.String() != "3" {
				t.Errorf("NGN count: %v", v["count"])
			}
		}
		// Tomorrow nothing of today's counts.
		e.Clock.Advance(24 * time.Hour)
		for _, v := range e.GQL(m.TestSecret, `{ volumeToday { currency incoming count } }`, nil).GQLData()["volumeToday"].([]any) {
			if v := v.(map[string]any); v["incoming"] != "0" {
				t.Errorf("tomorrow: %v", v)
			}
		}
	})
}
