package rest_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"merchantpay/server/servertest"
)

// bankKeys checks that m has exactly the keys, and returns m.
func bankKeys(t *testing.T, what string, v any, keys ...string) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: %#v is not an object", what, v)
	}
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		t.Fatalf("%s: keys %v, want %v", what, got, keys)
	}
	return m
}

func bankString(t *testing.T, what string, v any) string {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s: %#v is not a string", what, v)
	}
	return s
}

func bankInt(t *testing.T, what string, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%s: %#v is not a number", what, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatalf("%s: %s is not an integer", what, n)
	}
	return i
}

func TestListBanks(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")

		// Public keys may list banks, one of the two routes open to them.
		ng := e.REST("GET", "/misc/banks?country=NG", m.TestPublic, nil).Expect(200)
		if ng.JSON["status"] != true || ng.JSON["statusCode"] != json.Number("200") {
			t.Fatalf("envelope: %s", ng.Body[:200])
		}
		list := ng.List()
		if len(list) != len(e.App.Banks.Nigeria()) || len(list) != 98 {
			t.Fatalf("%d Nigerian banks, want 98", len(list))
		}
		codes := map[string]bool{}
		for i, b := range list {
			bank := bankKeys(t, "NG bank", b, "name", "slug", "code", "country")
			for _, k := range []string{"name", "slug", "code"} {
				if bankString(t, k, bank[k]) == "" {
					t.Errorf("NG bank %d: empty %s", i, k)
				}
			}
			if bank["country"] != "NG" {
				t.Errorf("NG bank %d: country %v", i, bank["country"])
			}
			codes[bank["code"].(string)] = true
		}
		for _, c := range []string{"035", "044", "058", "011"} {
			if !codes[c] {
				t.Errorf("code %s missing", c)
			}
		}

		gh := e.REST("GET", "/misc/banks?country=GH", m.LiveSecret, nil).Expect(200).List()
		if len(gh) != 23 {
			t.Fatalf("%d Ghanaian banks, want 23", len(gh))
		}
		branches := 0
		for _, b := range gh {
			bank := bankKeys(t, "GH bank", b, "id", "code", "name", "branches")
			id := bankInt(t, "id", bank["id"])
			code := bankString(t, "code", bank["code"])
			bankString(t, "name", bank["name"])
			if len(code) != 8 || !strings.HasPrefix(code, "GH") || !strings.HasSuffix(code, "0100") {
				t.Errorf("GH bank code %q", code)
			}
			brs, ok := bank["branches"].([]any)
			if !ok || len(brs) == 0 {
				t.Fatalf("GH bank %s: branches %v", code, bank["branches"])
			}
			for _, x := range brs {
				br := bankKeys(t, "GH branch", x, "id", "branch_code", "branch_name", "swift_code", "bic", "bank_id")
				bankInt(t, "branch id", br["id"])
				bc := bankString(t, "branch_code", br["branch_code"])
				bankString(t, "branch_name", br["branch_name"])
				bankString(t, "swift_code", br["swift_code"])
				bankString(t, "bic", br["bic"])
				if bankInt(t, "bank_id", br["bank_id"]) != id || bc[:4] != code[:4] {
					t.Errorf("branch %s of bank %s (id %d): bank_id %v", bc, code, id, br["bank_id"])
				}
				branches++
			}
		}
		if branches != 1203 {
			t.Errorf("%d Ghanaian branches, want 1203", branches)
		}

		for _, q := range []string{"", "?country=", "?country=US", "?country=ng", "?country=NGA"} {
			r := e.REST("GET", "/misc/banks"+q, m.TestSecret, nil)
			if r.Status != 400 || r.Code() != "VALIDATION_ERROR" || !slices.Equal(r.Fields(), []string{"country"}) {
				t.Errorf("%q: %d %s %v", q, r.Status, r.Code(), r.Fields())
			}
		}
		if r := e.REST("GET", "/misc/banks?country=NG", "", nil); r.Status != 401 {
			t.Errorf("no key: %d", r.Status)
		}
	})
}

func TestResolveBankAccount(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Ada Stores")
		resolve := func(key string, body any) *servertest.Resp {
			return e.REST("POST", "/misc/banks/resolve", key, body)
		}
		d := resolve(m.TestSecret, map[string]any{"bank": "058", "account": "0123456789"}).Expect(200).Data()
		bankKeys(t, "resolved", d, "bank_name", "bank_code", "account_number", "account_name")
		name := bankString(t, "account_name", d["account_name"])
		if d["bank_name"] != "Guaranty Trust Bank" || d["bank_code"] != "058" || d["account_number"] != "0123456789" ||
			len(strings.Fields(name)) < 2 || name != strings.ToUpper(name) {
			t.Fatalf("resolved %v", d)
		}
		// Stable across calls, modes and merchants; another number or bank
		// gives another name.
		other := e.Merchant("Bola Foods")
		for _, key := range []string{m.TestSecret, m.LiveSecret, other.TestSecret} {
			again := resolve(key, map[string]any{"bank": "058", "account": "0123456789"}).Expect(200).Data()
			if again["account_name"] != name {
				t.Errorf("name changed: %v, then %v", name, again["account_name"])
			}
		}
		if n := resolve(m.TestSecret, map[string]any{"bank": "058", "account": "0123456780"}).Expect(200).Data()["account_name"]; n == name {
			t.Errorf("two accounts resolve to %v", n)
		}
		// Non-CBN codes of the list resolve too.
		if d := resolve(m.TestSecret, map[string]any{"bank": "50211", "account": "8012345678"}).Expect(200).Data(); d["bank_code"] != "50211" {
			t.Errorf("fintech bank: %v", d)
		}

		for _, tc := range []struct {
			name   string
			body   any
			status int
			code   string
			fields []string
		}{
			{"not resolved", map[string]any{"bank": "058", "account": "0000000000"}, 422, "ACCOUNT_NOT_RESOLVED", []string{"account"}},
			{"unknown bank", map[string]any{"bank": "999", "account": "0123456789"}, 422, "UNKNOWN_BANK", []string{"bank"}},
			{"ghana bank", map[string]any{"bank": "GH030100", "account": "0123456789"}, 422, "UNKNOWN_BANK", []string{"bank"}},
			{"nine digits", map[string]any{"bank": "058", "account": "012345678"}, 400, "VALIDATION_ERROR", []string{"account"}},
			{"eleven digits", map[string]any{"bank": "058", "account": "01234567890"}, 400, "VALIDATION_ERROR", []string{"account"}},
			{"letters", map[string]any{"bank": "058", "account": "01234S6789"}, 400, "VALIDATION_ERROR", []string{"account"}},
			{"number", `{"bank":"058","account":1234567890}`, 400, "VALIDATION_ERROR", []string{"account"}},
			{"missing account", map[string]any{"bank": "058"}, 400, "VALIDATION_ERROR", []string{"account"}},
			{"missing both", map[string]any{}, 400, "VALIDATION_ERROR", []string{"account", "bank"}},
			{"bank not a string", `{"bank":58,"account":"0123456789"}`, 400, "VALIDATION_ERROR", []string{"bank"}},
			// Every bad field at once: an unknown bank beside a bad account.
			{"unknown bank, short account", map[string]any{"bank": "999", "account": "12"}, 400, "VALIDATION_ERROR", []string{"account", "bank"}},
			{"unknown bank, no account", map[string]any{"bank": "999"}, 400, "VALIDATION_ERROR", []string{"account", "bank"}},
			{"ghana bank, account a number", `{"bank":"GH030100","account":1234567890}`, 400, "VALIDATION_ERROR", []string{"account", "bank"}},
			{"not an object", `"058"`, 400, "BAD_REQUEST", nil},
		} {
			r := resolve(m.TestSecret, tc.body)
			got := r.Fields()
			slices.Sort(got)
			if r.Status != tc.status || r.Code() != tc.code || !slices.Equal(got, tc.fields) {
				t.Errorf("%s: %d %s %v, want %d %s %v", tc.name, r.Status, r.Code(), got, tc.status, tc.code, tc.fields)
			}
		}

		// Resolve needs a secret key.
		if r := resolve(m.TestPublic, map[string]any{"bank": "058", "account": "0123456789"}); r.Status != 403 || r.Code() != "FORBIDDEN" {
			t.Errorf("public key: %d %s", r.Status, r.Code())
		}
		if r := e.REST("GET", "/misc/banks/resolve", m.TestSecret, nil); r.Status != 405 {
			t.Errorf("GET resolve: %d", r.Status)
		}
	})
}
