package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/shopspring/decimal"

	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/rest"
	"merchantpay/server/servertest"
)

// eachLedger runs fn on a fresh service per database and checks the ledger's
// invariants after the scenario.
func eachLedger(t *testing.T, fn func(t *testing.T, e *servertest.Env)) {
	t.Helper()
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		fn(t, e)
		if err := ledger.Check(context.Background(), e.App.DB); err != nil {
			t.Fatalf("ledger invariants: %v", err)
		}
	})
}

// balances reads GET /balances as currency → entry.
func balances(t *testing.T, e *servertest.Env, key string) map[string]map[string]any {
	t.Helper()
	r := e.REST(http.MethodGet, "/balances", key, nil).Expect(200)
	out := map[string]map[string]any{}
	for i, x := range r.List() {
		b, ok := x.(map[string]any)
		if !ok {
			t.Fatalf("balance %d is not an object: %s", i, r.Body)
		}
		out[b["currency"].(string)] = b
	}
	return out
}

func TestBalancesEmpty(t *testing.T) {
	eachLedger(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Empty Co")
		r := e.REST(http.MethodGet, "/balances", m.TestSecret, nil).Expect(200)
		if r.JSON["status"] != true || r.JSON["statusCode"] != json.Number("200") {
			t.Errorf("envelope: %s", r.Body)
		}
		list := r.List()
		if len(list) != len(money.All()) {
			t.Fatalf("%d balances, want one per currency: %s", len(list), r.Body)
		}
		for i, x := range list {
			b := x.(map[string]any)
			if len(b) != 4 || b["currency"] != string(money.All()[i]) || b["available"] != json.Number("0") ||
				b["pending"] != json.Number("0") || b["updated_at"] != nil {
				t.Errorf("balance %d: %v", i, b)
			}
			if _, present := b["updated_at"]; !present {
				t.Errorf("balance %d has no updated_at", i)
			}
		}
		meta, _ := r.JSON["meta"].(map[string]any)
		if meta["has_more"] != false || meta["next_cursor"] != nil {
			t.Errorf("meta: %v", r.JSON["meta"])
		}

		// Paged like every REST list: limit and cursor walk the currencies in
		// order, each once; bad ones are refused.
		var seen []string
		path := "/balances?limit=2"
		for pages := 0; path != ""; pages++ {
			if pages > len(money.All()) {
				t.Fatal("the pages never end")
			}
			r := e.REST(http.MethodGet, path, m.TestSecret, nil).Expect(200)
			if n := len(r.List()); n > 2 || n == 0 {
				t.Errorf("%s: %d balances", path, n)
			}
			for _, x := range r.List() {
				seen = append(seen, x.(map[string]any)["currency"].(string))
			}
			path = ""
			if meta := r.JSON["meta"].(map[string]any); meta["has_more"] == true {
				path = "/balances?limit=2&cursor=" + meta["next_cursor"].(string)
			}
		}
		if want := fmt.Sprint(money.All()); fmt.Sprint(seen) != want {
			t.Errorf("paged currencies %v, want %s", seen, want)
		}
		for _, q := range []string{"?limit=0", "?limit=101", "?limit=x", "?cursor=zzz"} {
			if r := e.REST(http.MethodGet, "/balances"+q, m.TestSecret, nil); r.Status != 400 || r.Code() != "VALIDATION_ERROR" {
				t.Errorf("%s: %d %s", q, r.Status, r.Body)
			}
		}
	})
}

func TestFundBalance(t *testing.T) {
	eachLedger(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Fund Co")
		now := rest.Time(e.Clock.Now())
		r := e.REST(http.MethodPost, "/sandbox/balances/fund", m.TestSecret, `{"currency": "NGN", "amount": 1500.50}`).Expect(200)
		d := r.Data()
		if d["currency"] != "NGN" || d["available"] != json.Number("1500.5") || d["pending"] != json.Number("0") || d["updated_at"] != now {
			t.Errorf("fund answer: %s", r.Body)
		}
		if !strings.Contains(string(r.Body), `"available":1500.5,`) {
			t.Errorf("available is not the exact number 1500.5: %s", r.Body)
		}
		e.REST(http.MethodPost, "/sandbox/balances/fund", m.TestSecret, `{"currency": "NGN", "amount": 0.5}`).Expect(200)
		e.REST(http.MethodPost, "/sandbox/balances/fund", m.TestSecret, `{"currency": "BTC", "amount": 1e-8}`).Expect(200)
		r = e.REST(http.MethodPost, "/sandbox/balances/fund", m.TestSecret, `{"currency": "USDT", "amount": 10000000000}`).Expect(200)
		if r.Data()["available"] != json.Number("10000000000") {
			t.Errorf("largest funding: %s", r.Body)
		}
		bs := balances(t, e, m.TestSecret)
		for cur, want := range map[string]string{"NGN": "1501", "BTC": "0.00000001", "USDT": "10000000000", "GHS": "0", "ETH": "0"} {
			if bs[cur]["available"] != json.Number(want) || bs[cur]["pending"] != json.Number("0") {
				t.Errorf("%s: %v, want available %s", cur, bs[cur], want)
			}
		}
		if bs["NGN"]["updated_at"] != now || bs["GHS"]["updated_at"] != nil {
			t.Errorf("updated_at: NGN %v, GHS %v", bs["NGN"]["updated_at"], bs["GHS"]["updated_at"])
		}
		// The live mode and other merchants see none of it.
		for _, key := range []string{m.LiveSecret, e.Merchant("Other Co").TestSecret} {
			for cur, b := range balances(t, e, key) {
				if b["available"] != json.Number("0") {
					t.Errorf("%s leaked: %v", cur, b)
				}
			}
		}
	})
}

func TestFundValidation(t *testing.T) {
	eachLedger(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Strict Co")
		tests := []struct {
			body   string
			code   string
			fields []string
		}{
			{`{}`, "VALIDATION_ERROR", []string{"currency", "amount"}},
			{`{"currency": null, "amount": null}`, "VALIDATION_ERROR", []string{"currency", "amount"}},
			{`{"currency": "EUR", "amount": 10}`, "VALIDATION_ERROR", []string{"currency"}},
			{`{"currency": "ngn", "amount": 10}`, "VALIDATION_ERROR", []string{"currency"}},
			{`{"currency": "NGN", "amount": "100"}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"currency": "NGN", "amount": 1.001}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"currency": "BTC", "amount": 0.000000001}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"currency": "USDT", "amount": 0.0000001}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"currency": "NGN", "amount": 0}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"currency": "NGN", "amount": -5}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"currency": "NGN", "amount": 10000000000.01}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"currency": "NGN", "amount": 1e31}`, "VALIDATION_ERROR", []string{"amount"}},
			{`{"currency": 566, "amount": true}`, "VALIDATION_ERROR", []string{"currency", "amount"}},
			{`{"currency": "EUR", "amount": "ten"}`, "VALIDATION_ERROR", []string{"currency", "amount"}},
			{`{"currency": "XYZ", "amount": 0}`, "VALIDATION_ERROR", []string{"currency", "amount"}},
			{`[]`, "BAD_REQUEST", nil},
			{`{"currency": "NGN"`, "BAD_REQUEST", nil},
		}
		for _, tt := range tests {
			r := e.REST(http.MethodPost, "/sandbox/balances/fund", m.TestSecret, tt.body).Expect(400)
			got := r.Fields()
			sort.Strings(got)
			sort.Strings(tt.fields)
			if r.Code() != tt.code || fmt.Sprint(got) != fmt.Sprint(tt.fields) {
				t.Errorf("%s: code %s, fields %v; want %s %v", tt.body, r.Code(), r.Fields(), tt.code, tt.fields)
			}
		}
		for cur, b := range balances(t, e, m.TestSecret) {
			if b["available"] != json.Number("0") || b["updated_at"] != nil {
				t.Errorf("%s changed by a refused funding: %v", cur, b)
			}
		}

		// A balance holds at most 2^63-1 minor units: nine fundings of the
		// largest BTC amount fit, the tenth is refused and changes nothing.
		big := `{"currency": "BTC", "amount": 10000000000}`
		for range 9 {
			e.REST(http.MethodPost, "/sandbox/balances/fund", m.TestSecret, big).Expect(200)
		}
		if r := e.REST(http.MethodPost, "/sandbox/balances/fund", m.TestSecret, big); r.Status != 400 || fmt.Sprint(r.Fields()) != "[amount]" {
			t.Errorf("past the largest balance: %d %s", r.Status, r.Body)
		}
		if b := balances(t, e, m.TestSecret)["BTC"]; b["available"] != json.Number("90000000000") {
			t.Errorf("BTC after the refusal: %v", b)
		}
	})
}

func TestBalancesNeedSecretKey(t *testing.T) {
	eachLedger(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Keys Co")
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{http.MethodGet, "/balances", nil},
			{http.MethodPost, "/sandbox/balances/fund", `{"currency": "NGN", "amount": 10}`},
		} {
			for _, key := range []string{m.TestPublic, m.LivePublic} {
				if r := e.REST(c.method, c.path, key, c.body).Expect(403); r.Code() != "FORBIDDEN" {
					t.Errorf("%s %s with a public key: %s", c.method, c.path, r.Body)
				}
			}
			if r := e.REST(c.method, c.path, "", c.body).Expect(401); r.Code() != "UNAUTHORIZED" {
				t.Errorf("%s %s without a key: %s", c.method, c.path, r.Body)
			}
		}
		if r := e.REST(http.MethodPut, "/balances", m.TestSecret, nil).Expect(405); r.Code() != "METHOD_NOT_ALLOWED" {
			t.Errorf("PUT /balances: %s", r.Body)
		}
		for cur, b := range balances(t, e, m.TestSecret) {
			if b["available"] != json.Number("0") {
				t.Errorf("%s funded by a public key: %v", cur, b)
			}
		}
	})
}

// TestBalancesEqualFundings: concurrent fundings, some repeated under one
// Idempotency-Key, add up exactly to the balance.
func TestBalancesEqualFundings(t *testing.T) {
	eachLedger(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Sum Co")
		amounts := []string{"0.01", "1", "2.5", "99.99", "1000", "0.07", "123456.78", "5", "0.1", "42"}
		var wg sync.WaitGroup
		for i, a := range amounts {
			for _, cur := range []string{"NGN", "GHS"} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := fmt.Sprintf(`{"currency": %q, "amount": %s}`, cur, a)
					key := fmt.Sprintf("fund-%s-%d", cur, i)
					e.REST(http.MethodPost, "/sandbox/balances/fund", m.TestSecret, body, "Idempotency-Key", key).Expect(200)
					// A replay answers the same and moves no money.
					r := e.REST(http.MethodPost, "/sandbox/balances/fund", m.TestSecret, body, "Idempotency-Key", key)
					if r.Status != 200 && r.Code() != "IDEMPOTENCY_KEY_IN_USE" {
						t.Errorf("repeat: %s", r.Body)
					}
				}()
			}
		}
		wg.Wait()
		want := decimal.Zero
		for _, a := range amounts {
			want = want.Add(decimal.RequireFromString(a))
		}
		bs := balances(t, e, m.TestSecret)
		for _, cur := range []string{"NGN", "GHS"} {
			if bs[cur]["available"] != json.Number(want.String()) {
				t.Errorf("%s available %v, want the sum of fundings %s", cur, bs[cur]["available"], want)
			}
		}
	})
}
