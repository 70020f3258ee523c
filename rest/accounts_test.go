package rest_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/banks"
	"merchantpay/rest"
	"merchantpay/server/servertest"
)

// acctWallet is a valid wallet request; extra fields are merged in.
func acctWallet(ref string, extra map[string]any) map[string]any {
	body := map[string]any{
		"wallet_reference": ref,
		"compliance": map[string]any{
			"phone": "+2348012345678", "firstname": "Chioma", "lastname": "Okafor", "email": "chioma@example.com",
			"documents": []any{map[string]any{"document_type": "NIN", "document_file": "https://example.com/nin.png",
				"document_file_type": "url", "document_no": "12345678901"}},
		},
	}
	for k, v := range extra {
		body[k] = v
	}
	return body
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// acctCheck checks every field of a Fiat account and its JSON type, and
// that the account number is a valid NUBAN of the issuing bank.
func acctCheck(t *testing.T, e *servertest.Env, d map[string]any, kind, walletRef string, amount string, expires *time.Time) {
	t.Helper()
	wema, ok := e.App.Banks.NGByCode("035")
	if !ok {
		t.Fatal("035 not in the bank list")
	}
	want := []string{"account_type", "account_reference", "currency", "amount", "expires_at", "account_number",
		"account_name", "bank_name", "wallet_reference", "type", "address", "url", "tag", "chain"}
	for _, k := range want {
		if _, ok := d[k]; !ok {
			t.Errorf("field %s missing in %v", k, d)
		}
	}
	if len(d) != len(want) {
		t.Errorf("%d fields, want %d: %v", len(d), len(want), d)
	}
	if d["account_type"] != kind || d["currency"] != "NGN" || d["type"] != "FIAT" {
		t.Errorf("account_type/currency/type: %v %v %v", d["account_type"], d["currency"], d["type"])
	}
	if ref, ok := d["account_reference"].(string); !ok || ref == "" {
		t.Errorf("account_reference %v", d["account_reference"])
	}
	num, _ := d["account_number"].(string)
	if !banks.ValidNUBAN("035", num) {
		t.Errorf("account_number %q is not a valid NUBAN at 035", num)
	}
	if d["bank_name"] != wema.Name {
		t.Errorf("bank_name %v, want %q", d["bank_name"], wema.Name)
	}
	if name, ok := d["account_name"].(string); !ok || !strings.HasPrefix(name, "Ada Stores") || len(name) > 64 {
		t.Errorf("account_name %v", d["account_name"])
	}
	if walletRef == "" {
		if d["wallet_reference"] != nil || d["account_name"] != "Ada Stores" {
			t.Errorf("global account: wallet_reference %v, account_name %v", d["wallet_reference"], d["account_name"])
		}
	} else if d["wallet_reference"] != walletRef || d["account_name"] != "Ada Stores / Chioma Okafor" {
		t.Errorf("wallet_reference %v, account_name %v", d["wallet_reference"], d["account_name"])
	}
	if amount == "" {
		if d["amount"] != nil {
			t.Errorf("amount %v, want null", d["amount"])
		}
	} else if n, ok := d["amount"].(json.Number); !ok || string(n) != amount {
		t.Errorf("amount %#v, want the number %s", d["amount"], amount)
	}
	if expires == nil {
		if d["expires_at"] != nil {
			t.Errorf("expires_at %v, want null", d["expires_at"])
		}
	} else if s, ok := d["expires_at"].(string); !ok || s != rest.Time(*expires) {
		t.Errorf("expires_at %#v, want %q", d["expires_at"], rest.Time(*expires))
	}
	for _, k := range []string{"address", "url", "tag", "chain"} {
		if d[k] != nil {
			t.Errorf("%s %v, want null", k, d[k])
		}
	}
}

func acctCreated(t *testing.T, r *servertest.Resp) map[string]any {
	t.Helper()
	r.Expect(http.StatusCreated)
	if r.JSON["status"] != true || r.JSON["statusCode"] != json.Number("201") {
		t.Fatalf("envelope: %s", r.Body)
	}
	return r.Data()
}

func TestCreateAccountKinds(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		acctCreated(t, e.REST("POST", "/wallets", m.TestSecret, acctWallet("cust-1", nil)))
		now := e.Clock.Now()

		static := acctCreated(t, e.REST("POST", "/wallets/cust-1", m.TestSecret, map[string]any{
			"account_type": "static", "currency": "NGN", "account_reference": "st-1",
			"amount": nil, "expires_at": nil, "reject_amount_criteria": nil}))
		acctCheck(t, e, static, "static", "cust-1", "", nil)
		if static["account_reference"] != "st-1" {
			t.Errorf("account_reference %v", static["account_reference"])
		}

		sd := acctCreated(t, e.REST("POST", "/wallets/cust-1", m.TestSecret, map[string]any{
			"account_type": "static_dynamic", "currency": "NGN"}))
		acctCheck(t, e, sd, "static_dynamic", "cust-1", "", nil)
		if !uuidRE.MatchString(sd["account_reference"].(string)) {
			t.Errorf("generated account_reference %v is not a UUID", sd["account_reference"])
		}

		exp := now.Add(45 * time.Minute)
		dyn := acctCreated(t, e.REST("POST", "/wallets/cust-1", m.TestSecret,
			`{"account_type":"dynamic","currency":"NGN","account_reference":"dyn-1","amount":2500.50,"expires_at":45,"reject_amount_criteria":"GREATER_THAN_ONLY"}`))
		acctCheck(t, e, dyn, "dynamic", "cust-1", "2500.5", &exp)

		for _, c := range []string{"NOT_EQUAL", "LESS_THAN_ONLY", "NONE"} {
			d := acctCreated(t, e.REST("POST", "/wallets/cust-1", m.TestSecret, map[string]any{
				"account_type": "dynamic", "currency": "NGN", "amount": 100, "expires_at": 1, "reject_amount_criteria": c}))
			one := now.Add(time.Minute)
			acctCheck(t, e, d, "dynamic", "cust-1", "100", &one)
		}
		// The criteria default to NOT_EQUAL; the request's decimals may be
		// exact trailing zeros.
		d := acctCreated(t, e.REST("POST", "/wallets/cust-1", m.TestSecret,
			`{"account_type":"dynamic","currency":"NGN","amount":1e3,"expires_at":60.0}`))
		sixty := now.Add(time.Hour)
		acctCheck(t, e, d, "dynamic", "cust-1", "1000", &sixty)

		// GET lists the wallet's accounts, oldest first, in the same shape.
		got := e.REST("GET", "/wallets/cust-1", m.TestSecret, nil).Expect(200).Data()
		list, _ := got["accounts"].([]any)
		if len(list) != 7 {
			t.Fatalf("%d accounts listed, want 7: %v", len(list), got["accounts"])
		}
		first, _ := list[0].(map[string]any)
		acctCheck(t, e, first, "static", "cust-1", "", nil)
		if first["account_number"] != static["account_number"] {
			t.Errorf("first listed %v, want %v", first["account_number"], static["account_number"])
		}
		third, _ := list[2].(map[string]any)
		acctCheck(t, e, third, "dynamic", "cust-1", "2500.5", &exp)

		// Another wallet with no account lists none.
		acctCreated(t, e.REST("POST", "/wallets", m.TestSecret, acctWallet("cust-2", nil)))
		if l, _ := e.REST("GET", "/wallets/cust-2", m.TestSecret, nil).Expect(200).Data()["accounts"].([]any); l == nil || len(l) != 0 {
			t.Errorf("accounts of an empty wallet: %v", l)
		}
	})
}

func TestCreateAccountValidation(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		acctCreated(t, e.REST("POST", "/wallets", m.TestSecret, acctWallet("cust-1", nil)))
		for _, tc := range []struct {
			name   string
			body   string
			fields []string
		}{
			{"static with amount", `{"account_type":"static","currency":"NGN","amount":100}`, []string{"amount"}},
			{"static with everything", `{"account_type":"static","currency":"NGN","amount":100,"expires_at":10,"reject_amount_criteria":"NONE"}`,
				[]string{"amount", "expires_at", "reject_amount_criteria"}},
			{"static_dynamic with expiry", `{"account_type":"static_dynamic","currency":"NGN","expires_at":10}`, []string{"expires_at"}},
			{"dynamic without amount and expiry", `{"account_type":"dynamic","currency":"NGN"}`, []string{"amount", "expires_at"}},
			{"dynamic without expiry", `{"account_type":"dynamic","currency":"NGN","amount":100}`, []string{"expires_at"}},
			{"expires_at 0", `{"account_type":"dynamic","currency":"NGN","amount":100,"expires_at":0}`, []string{"expires_at"}},
			{"expires_at 61", `{"account_type":"dynamic","currency":"NGN","amount":100,"expires_at":61}`, []string{"expires_at"}},
			{"expires_at 1.5", `{"account_type":"dynamic","currency":"NGN","amount":100,"expires_at":1.5}`, []string{"expires_at"}},
			{"expires_at string", `{"account_type":"dynamic","currency":"NGN","amount":100,"expires_at":"30"}`, []string{"expires_at"}},
			{"bad criteria", `{"account_type":"dynamic","currency":"NGN","amount":100,"expires_at":30,"reject_amount_criteria":"EQUAL"}`,
				[]string{"reject_amount_criteria"}},
			{"lower-case criteria", `{"account_type":"dynamic","currency":"NGN","amount":100,"expires_at":30,"reject_amount_criteria":"none"}`,
				[]string{"reject_amount_criteria"}},
			{"amount 0", `{"account_type":"dynamic","currency":"NGN","amount":0,"expires_at":30}`, []string{"amount"}},
			{"amount negative", `{"account_type":"dynamic","currency":"NGN","amount":-5,"expires_at":30}`, []string{"amount"}},
			{"amount 3 decimals", `{"account_type":"dynamic","currency":"NGN","amount":1.005,"expires_at":30}`, []string{"amount"}},
			{"amount too large", `{"account_type":"dynamic","currency":"NGN","amount":10000000001,"expires_at":30}`, []string{"amount"}},
			{"amount string", `{"account_type":"dynamic","currency":"NGN","amount":"100","expires_at":30}`, []string{"amount"}},
			{"currency GHS", `{"account_type":"static","currency":"GHS"}`, []string{"currency"}},
			{"currency missing", `{"account_type":"static"}`, []string{"currency"}},
			{"type missing", `{"currency":"NGN"}`, []string{"account_type"}},
			{"type unknown", `{"account_type":"savings","currency":"NGN"}`, []string{"account_type"}},
			{"type not a string", `{"account_type":1,"currency":"NGN"}`, []string{"account_type"}},
			{"bad reference", `{"account_type":"static","currency":"NGN","account_reference":"has space"}`, []string{"account_reference"}},
			{"everything at once", `{"account_type":"dynamic","currency":"GHS","account_reference":"","amount":-1,"expires_at":61,"reject_amount_criteria":"X"}`,
				[]string{"account_reference", "currency", "amount", "expires_at", "reject_amount_criteria"}},
		} {
			r := e.REST("POST", "/wallets/cust-1", m.TestSecret, tc.body).Expect(http.StatusBadRequest)
			got := r.Fields()
			slices.Sort(got)
			want := slices.Clone(tc.fields)
			slices.Sort(want)
			if r.Code() != "VALIDATION_ERROR" || !slices.Equal(got, want) {
				t.Errorf("%s: %s %v, want VALIDATION_ERROR %v; body %s", tc.name, r.Code(), got, want, r.Body)
			}
		}
		if r := e.REST("POST", "/wallets/cust-1", m.TestSecret, `[1]`); r.Status != 400 || r.Code() != "BAD_REQUEST" {
			t.Errorf("array body: %d %s", r.Status, r.Code())
		}
		// Nothing was created by any of them.
		if l, _ := e.REST("GET", "/wallets/cust-1", m.TestSecret, nil).Expect(200).Data()["accounts"].([]any); len(l) != 0 {
			t.Errorf("%d accounts after failed requests", len(l))
		}
	})
}

func TestCreateAccountVisibilityAndDuplicates(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		other := e.Merchant("Bola Foods")
		acctCreated(t, e.REST("POST", "/wallets", m.TestSecret, acctWallet("cust-1", nil)))
		body := map[string]any{"account_type": "static", "currency": "NGN", "account_reference": "acc-1"}

		for name, key := range map[string]string{
			"another merchant's wallet": other.TestSecret,
			"the other mode's wallet":   m.LiveSecret,
		} {
			if r := e.REST("POST", "/wallets/cust-1", key, body); r.Status != 404 || r.Code() != "NOT_FOUND" {
				t.Errorf("%s: %d %s", name, r.Status, r.Code())
			}
		}
		if r := e.REST("POST", "/wallets/nobody", m.TestSecret, body); r.Status != 404 || r.Code() != "NOT_FOUND" {
			t.Errorf("unknown wallet: %d %s", r.Status, r.Code())
		}
		if r := e.REST("POST", "/wallets/cust-1", m.TestPublic, body); r.Status != 403 || r.Code() != "FORBIDDEN" {
			t.Errorf("public key: %d %s", r.Status, r.Code())
		}

		acctCreated(t, e.REST("POST", "/wallets/cust-1", m.TestSecret, body))
		r := e.REST("POST", "/wallets/cust-1", m.TestSecret, body)
		if r.Status != 409 || r.Code() != "DUPLICATE_REFERENCE" || !slices.Equal(r.Fields(), []string{"account_reference"}) {
			t.Errorf("duplicate: %d %s %v", r.Status, r.Code(), r.Fields())
		}
		// The global account shares the reference space.
		if r := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_reference": "acc-1"}); r.Status != 409 {
			t.Errorf("duplicate global: %d %s", r.Status, r.Body)
		}
		// References are per merchant and mode.
		acctCreated(t, e.REST("POST", "/wallets", other.TestSecret, acctWallet("cust-1", nil)))
		acctCreated(t, e.REST("POST", "/wallets/cust-1", other.TestSecret, body))
		acctCreated(t, e.REST("POST", "/wallets", m.LiveSecret, acctWallet("cust-1", nil)))
		acctCreated(t, e.REST("POST", "/wallets/cust-1", m.LiveSecret, body))
	})
}

func TestWalletWithInlineAccount(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		now := e.Clock.Now()

		w := acctCreated(t, e.REST("POST", "/wallets", m.TestSecret, acctWallet("cust-1", map[string]any{
			"account": map[string]any{"account_type": "dynamic", "currency": "NGN", "amount": 750.25,
				"expires_at": 15, "reject_amount_criteria": "NONE", "account_reference": "inline-1"}})))
		acc, ok := w["account"].(map[string]any)
		if !ok {
			t.Fatalf("data.account: %v", w["account"])
		}
		exp := now.Add(15 * time.Minute)
		acctCheck(t, e, acc, "dynamic", "cust-1", "750.25", &exp)
		if w["wallet_reference"] != "cust-1" || w["full_name"] != "Chioma Okafor" {
			t.Errorf("wallet: %v", w)
		}
		l, _ := e.REST("GET", "/wallets/cust-1", m.TestSecret, nil).Expect(200).Data()["accounts"].([]any)
		if len(l) != 1 || l[0].(map[string]any)["account_reference"] != "inline-1" {
			t.Errorf("listed: %v", l)
		}

		// account null or absent: no account.
		for i, extra := range []map[string]any{{"account": nil}, nil} {
			w := acctCreated(t, e.REST("POST", "/wallets", m.TestSecret, acctWallet(fmt.Sprintf("plain-%d", i), extra)))
			if v, ok := w["account"]; !ok || v != nil {
				t.Errorf("account %v, want null", v)
			}
		}

		// A bad inline field is reported with the wallet's bad fields, and
		// creates neither the wallet nor the account.
		bad := acctWallet("cust-bad", map[string]any{"account": map[string]any{
			"account_type": "static", "currency": "USD", "amount": 5, "account_reference": "inline-bad"}})
		bad["compliance"].(map[string]any)["email"] = "not-an-email"
		r := e.REST("POST", "/wallets", m.TestSecret, bad).Expect(400)
		got := r.Fields()
		slices.Sort(got)
		if r.Code() != "VALIDATION_ERROR" || !slices.Equal(got, []string{"account.amount", "account.currency", "compliance.email"}) {
			t.Errorf("bad inline: %s %v", r.Code(), got)
		}
		// Only the account is bad.
		bad = acctWallet("cust-bad", map[string]any{"account": map[string]any{"account_type": "dynamic",
			"currency": "NGN", "account_reference": "inline-bad", "amount": 10, "expires_at": 90}})
		r = e.REST("POST", "/wallets", m.TestSecret, bad).Expect(400)
		if !slices.Equal(r.Fields(), []string{"account.expires_at"}) {
			t.Errorf("bad inline expiry: %v", r.Fields())
		}
		r = e.REST("POST", "/wallets", m.TestSecret, acctWallet("cust-bad", map[string]any{"account": "static"})).Expect(400)
		if !slices.Equal(r.Fields(), []string{"account"}) {
			t.Errorf("account not an object: %v", r.Fields())
		}
		// A duplicate inline account_reference rolls the wallet back too.
		r = e.REST("POST", "/wallets", m.TestSecret, acctWallet("cust-bad", map[string]any{"account": map[string]any{
			"account_type": "static", "currency": "NGN", "account_reference": "inline-1"}}))
		if r.Status != 409 || !slices.Equal(r.Fields(), []string{"account.account_reference"}) {
			t.Errorf("duplicate inline: %d %v", r.Status, r.Fields())
		}
		e.REST("GET", "/wallets/cust-bad", m.TestSecret, nil).Expect(404)
		// inline-bad was never created: the reference is still free.
		acctCreated(t, e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_reference": "inline-bad"}))
	})
}

func TestGlobalAccount(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		g := acctCreated(t, e.REST("POST", "/accounts", m.TestSecret, map[string]any{}))
		acctCheck(t, e, g, "static_dynamic", "", "", nil)
		g2 := acctCreated(t, e.REST("POST", "/accounts", m.TestSecret, map[string]any{
			"account_type": "static_dynamic", "currency": "NGN", "account_reference": "global-main"}))
		acctCheck(t, e, g2, "static_dynamic", "", "", nil)
		if g2["account_reference"] != "global-main" || g2["account_number"] == g["account_number"] {
			t.Errorf("second global account: %v", g2)
		}
		for _, tc := range []struct{ body, field string }{
			{`{"account_type":"dynamic"}`, "account_type"},
			{`{"account_type":"static"}`, "account_type"},
			{`{"currency":"GHS"}`, "currency"},
			{`{"amount":100}`, "amount"},
			{`{"expires_at":10}`, "expires_at"},
			{`{"reject_amount_criteria":"NONE"}`, "reject_amount_criteria"},
		} {
			r := e.REST("POST", "/accounts", m.TestSecret, tc.body)
			if r.Status != 400 || !slices.Equal(r.Fields(), []string{tc.field}) {
				t.Errorf("%s: %d %v", tc.body, r.Status, r.Fields())
			}
		}
		if r := e.REST("GET", "/accounts", m.TestSecret, nil); r.Status != 405 {
			t.Errorf("GET /accounts: %d", r.Status)
		}
	})
}

func TestIssuedNumbersAreUniqueValidNUBANs(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		acctCreated(t, e.REST("POST", "/wallets", m.TestSecret, acctWallet("cust-1", nil)))
		seen := map[string]bool{}
		kinds := []map[string]any{
			{"account_type": "static", "currency": "NGN"},
			{"account_type": "static_dynamic", "currency": "NGN"},
			{"account_type": "dynamic", "currency": "NGN", "amount": 10, "expires_at": 5},
		}
		for i := range 30 {
			d := acctCreated(t, e.REST("POST", "/wallets/cust-1", m.TestSecret, kinds[i%3]))
			n := d["account_number"].(string)
			if !banks.ValidNUBAN("035", n) || seen[n] {
				t.Fatalf("account number %s: valid %v, seen %v", n, banks.ValidNUBAN("035", n), seen[n])
			}
			seen[n] = true
		}
	})
}
