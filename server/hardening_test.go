package server_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"merchantpay/server/servertest"
)

// onlyReader hides a reader's length from net/http, which then sends the
// body chunked.
type onlyReader struct{ r *strings.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// A body is one JSON value and nothing after it but white space: a stray
// ']' or '}' after the object (which encoding/json's Decoder.More does
// not see) is BAD_REQUEST, on REST and GraphQL alike, and changes nothing.
func TestBodyIsOneJSONValue(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		wallet, err := json.Marshal(sampleWallet("trailing"))
		if err != nil {
			t.Fatal(err)
		}
		for _, tail := range []string{" ]", "}", " ]]]}}}", "\n}\n"} {
			r := e.REST("POST", "/wallets", m.TestSecret, string(wallet)+tail)
			if r.Status != 400 || r.Code() != "BAD_REQUEST" {
				t.Errorf("REST body + %q: %d %s", tail, r.Status, r.Body)
			}
			fund := `{"query":"mutation{fundBalance(input:{currency:\"NGN\",amount:\"1\"}){available}}"}`
			r = e.Do("POST", "/graphql", m.TestSecret, fund+tail)
			if r.Status != 400 || r.Code() != "BAD_REQUEST" {
				t.Errorf("GraphQL body + %q: %d %s", tail, r.Status, r.Body)
			}
		}
		for _, body := range []string{`[]`, `"x"`, `1`, `null`, `not json`} {
			if r := e.Do("POST", "/graphql", m.TestSecret, body); r.Status != 400 || r.Code() != "BAD_REQUEST" {
				t.Errorf("GraphQL body %s: %d %s", body, r.Status, r.Body)
			}
		}
		e.REST("GET", "/wallets/trailing", m.TestSecret, nil).Expect(404)
		bal := e.GQL(m.TestSecret, `{balances{currency available}}`, nil).GQLData()["balances"].([]any)
		for _, b := range bal {
			if b := b.(map[string]any); b["available"] != "0" {
				t.Errorf("a refused mutation changed a balance: %v", b)
			}
		}
		// White space after the value is fine.
		e.REST("POST", "/wallets", m.TestSecret, string(wallet)+" \n\t").Expect(201)
	})
}

// A chunked body (its length unknown) without a JSON Content-Type is 415,
// as the same body with a length is.
func TestChunkedBodyNeedsJSONType(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		wallet, err := json.Marshal(sampleWallet("chunked"))
		if err != nil {
			t.Fatal(err)
		}
		for _, ct := range []string{"", "text/plain"} {
			r := e.REST("POST", "/wallets", m.TestSecret, onlyReader{strings.NewReader(string(wallet))}, "Content-Type", ct)
			if r.Status != 415 || r.Code() != "UNSUPPORTED_MEDIA_TYPE" {
				t.Errorf("REST, Content-Type %q: %d %s", ct, r.Status, r.Body)
			}
			r = e.Do("POST", "/graphql", m.TestSecret, onlyReader{strings.NewReader(`{"query":"{balances{currency}}"}`)}, "Content-Type", ct)
			if r.Status != 415 || r.Code() != "UNSUPPORTED_MEDIA_TYPE" {
				t.Errorf("GraphQL, Content-Type %q: %d %s", ct, r.Status, r.Body)
			}
		}
		e.REST("GET", "/wallets/chunked", m.TestSecret, nil).Expect(404)
		// Chunked and application/json: accepted.
		e.REST("POST", "/wallets", m.TestSecret, onlyReader{strings.NewReader(string(wallet))}).Expect(201)
	})
}

// POST /misc/banks/resolve changes nothing, yet takes an Idempotency-Key as
// every POST does: too long is VALIDATION_ERROR, a repeat is replayed byte for
// byte, another body under the key is refused.
func TestResolveTakesIdempotencyKey(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		body := map[string]any{"bank": "058", "account": "0123456789"}
		r := e.REST("POST", "/misc/banks/resolve", m.TestSecret, body, "Idempotency-Key", strings.Repeat("k", 256)).Expect(400)
		if r.Code() != "VALIDATION_ERROR" {
			t.Errorf("long key: %s", r.Body)
		}
		first := e.REST("POST", "/misc/banks/resolve", m.TestSecret, body, "Idempotency-Key", "rk-1").Expect(200)
		if first.Header.Get("Idempotent-Replayed") != "" {
			t.Error("the first answer says it is a replay")
		}
		again := e.REST("POST", "/misc/banks/resolve", m.TestSecret, body, "Idempotency-Key", "rk-1").Expect(200)
		if again.Header.Get("Idempotent-Replayed") != "true" || string(again.Body) != string(first.Body) {
			t.Errorf("repeat: replayed %q, body %s, want %s", again.Header.Get("Idempotent-Replayed"), again.Body, first.Body)
		}
		other := map[string]any{"bank": "035", "account": "0123456789"}
		if r := e.REST("POST", "/misc/banks/resolve", m.TestSecret, other, "Idempotency-Key", "rk-1"); r.Status != 409 || r.Code() != "IDEMPOTENCY_KEY_REUSED" {
			t.Errorf("another body under the key: %d %s", r.Status, r.Body)
		}
		// Without a key it is answered afresh each time.
		for range 2 {
			if r := e.REST("POST", "/misc/banks/resolve", m.TestSecret, body).Expect(200); r.Header.Get("Idempotent-Replayed") != "" {
				t.Error("an unkeyed request was replayed")
			}
		}
	})
}

// A Decimal or Time argument that cannot be read is the client's mistake:
// VALIDATION_ERROR naming the argument, not INTERNAL_ERROR. Fields are
// named as GraphQL names them (camelCase), without the input object.
func TestGraphQLBadScalarIsValidation(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		for _, amount := range []string{`"abc"`, `"1x"`, `" 1"`, `1.5`} {
			r := e.GQL(m.TestSecret, `mutation{fundBalance(input:{currency:"NGN",amount:`+amount+`}){available}}`, nil).Expect(200)
			if r.Code() != "VALIDATION_ERROR" || !strings.Contains(string(r.Body), `"field":"amount"`) {
				t.Errorf("amount %s: %s", amount, r.Body)
			}
		}
		r := e.GQL(m.TestSecret, `mutation($a: Decimal!){fundBalance(input:{currency:"NGN",amount:$a}){available}}`,
			map[string]any{"a": 0.1}).Expect(200)
		if r.Code() != "VALIDATION_ERROR" {
			t.Errorf("a number variable: %s", r.Body)
		}
		// An enum value in the wrong case, as a variable (gqlparser lets it
		// through, gqlgen refuses it): the client's mistake, named.
		for _, c := range []struct {
			query string
			vars  map[string]any
			field string
		}{
			{`query($s: TransactionStatus){ transactions(filter: {status: $s}) { edges { cursor } } }`, map[string]any{"s": "success"}, "filter.status"},
			{`query($c: Country!){ banks(country: $c) { code } }`, map[string]any{"c": "ng"}, "country"},
			{`mutation($in: CreateRateInput!){ createRate(input: $in) { reference } }`, map[string]any{"in": map[string]any{
				"fromCurrency": "USDT", "toCurrency": "NGN", "fromAmount": "1", "transactionType": "swap"}}, "transactionType"},
		} {
			r := e.GQL(m.TestSecret, c.query, c.vars).Expect(200)
			if r.Code() != "VALIDATION_ERROR" || !strings.Contains(string(r.Body), `"field":"`+c.field+`"`) || strings.Contains(string(r.Body), "internal") {
				t.Errorf("%v: %s", c.vars, r.Body)
			}
		}
	})
}

// Paths are matched as sent: the bare prefix, a doubled or trailing slash
// is an unknown path (404 in the JSON envelope), never a redirect or an
// alias of another route.
func TestPathsMatchedAsSent(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		for _, p := range []string{"/v1/merchant/public", "/v1/merchant/public/", "/v1/merchant/public//wallets",
			"/v1/merchant/public/wallets/", "/v1/merchant/public/wallets//", "/v1/merchant/public/wallets/%2F",
			"/v1/merchant/public/./wallets", "/nowhere", "/graphql/"} {
			for _, key := range []string{"", m.TestSecret} {
				r := e.Do("GET", p, key, nil)
				if r.Status != 404 || r.Code() != "NOT_FOUND" || r.Header.Get("X-Request-Id") == "" {
					t.Errorf("GET %s (key %v): %d %s", p, key != "", r.Status, r.Body)
				}
			}
		}
		e.REST("GET", "/wallets", m.TestSecret, nil).Expect(200)
		e.Do("GET", "/healthz", "", nil).Expect(200)
		e.Do("GET", "/readyz", "", nil).Expect(200)
	})
}

// GraphQL connections give Relay's PageInfo: endCursor is the last edge's
// cursor on every page, the last included (a client keeps it to carry on
// later), and hasPreviousPage tells a page read after a cursor.
func TestConnectionPageInfo(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		for _, ref := range []string{"pi-1", "pi-2", "pi-3"} {
			e.REST("POST", "/wallets", m.TestSecret, sampleWallet(ref)).Expect(201)
		}
		const q = `query($after: String) { wallets(first: 2, after: $after) {
			edges { cursor } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`
		read := func(after any) ([]string, map[string]any) {
			conn := e.GQL(m.TestSecret, q, map[string]any{"after": after}).GQLData()["wallets"].(map[string]any)
			var cursors []string
			for _, ed := range conn["edges"].([]any) {
				cursors = append(cursors, ed.(map[string]any)["cursor"].(string))
			}
			return cursors, conn["pageInfo"].(map[string]any)
		}
		c1, p1 := read(nil)
		if len(c1) != 2 || p1["hasNextPage"] != true || p1["hasPreviousPage"] != false ||
			p1["startCursor"] != c1[0] || p1["endCursor"] != c1[1] {
			t.Fatalf("first page: %v %v", c1, p1)
		}
		c2, p2 := read(p1["endCursor"])
		if len(c2) != 1 || p2["hasNextPage"] != false || p2["hasPreviousPage"] != true ||
			p2["startCursor"] != c2[0] || p2["endCursor"] != c2[0] {
			t.Fatalf("last page: %v %v", c2, p2)
		}
		c3, p3 := read(p2["endCursor"])
		if len(c3) != 0 || p3["hasNextPage"] != false || p3["endCursor"] != nil || p3["startCursor"] != nil {
			t.Fatalf("after the last: %v %v", c3, p3)
		}
		// REST keeps its contract: next_cursor only when more follow.
		r := e.REST("GET", "/wallets?limit=3", m.TestSecret, nil).Expect(200)
		if meta := r.JSON["meta"].(map[string]any); meta["has_more"] != false || meta["next_cursor"] != nil {
			t.Errorf("REST meta: %v", meta)
		}
	})
}

// GraphQL errors name bad fields as GraphQL names them: the services'
// snake_case names come out in camelCase, indexes kept.
func TestGraphQLFieldNamesCamelCase(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		r := e.GQL(m.TestSecret, `mutation { withdraw(input: {amount: "1", currency: "NGN",
			beneficiary: {email: "bad", bank: "035", accountName: "", accountNumber: "12"}}) { reference } }`, nil).Expect(200)
		body := string(r.Body)
		for _, want := range []string{`"field":"beneficiary.email"`, `"field":"beneficiary.accountName"`, `"field":"beneficiary.accountNumber"`} {
			if !strings.Contains(body, want) {
				t.Errorf("want %s in %s", want, body)
			}
		}
		if strings.Contains(body, "account_name") && strings.Contains(body, `"field":"beneficiary.account_`) {
			t.Errorf("snake_case field names: %s", body)
		}
	})
}

// Text PostgreSQL cannot hold (a NUL, invalid UTF-8) is refused as a bad
// field, or found to name nothing, the same on both databases: never a 500.
func TestTextTheDatabaseCannotHold(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Nul Co")
		expect := func(what string, r *servertest.Resp, status int, code string, fields ...string) {
			t.Helper()
			got := r.Fields()
			slices.Sort(got)
			if r.Status != status || r.Code() != code || (fields != nil && !slices.Equal(got, fields)) {
				t.Errorf("%s: %d %s %v, want %d %s %v: %s", what, r.Status, r.Code(), got, status, code, fields, r.Body)
			}
		}
		w := sampleWallet("nul-1")
		c := w["compliance"].(map[string]any)
		c["firstname"], c["lastname"] = "Chi\x00nedu", "Oka\x00for"
		c["documents"].([]any)[0].(map[string]any)["document_no"] = "A0\x001"
		expect("wallet", e.REST("POST", "/wallets", m.TestSecret, w), 400, "VALIDATION_ERROR",
			"compliance.documents[0].document_no", "compliance.firstname", "compliance.lastname")
		expect("GraphQL wallet", e.GQL(m.TestSecret, `mutation($in: CreateWalletInput!) { createWallet(input: $in) { walletReference } }`,
			map[string]any{"in": map[string]any{"compliance": map[string]any{"phone": "08012345678", "firstname": "A\x00da", "lastname": "Obi",
				"email": "ada@example.com", "documents": []any{map[string]any{"documentType": "NIN", "documentFile": "https://x.example/nin.png",
					"documentFileType": "url", "documentNo": "123"}}}}}), 200, "VALIDATION_ERROR")
		expect("refresh", e.REST("POST", "/rates/refresh", m.TestSecret, map[string]any{"reference": "q\x00"}), 400, "VALIDATION_ERROR", "reference")
		ben := map[string]any{"email": "ada@example.com", "bank": "058", "account_name": "Ada Obi", "account_number": "0123456789"}
		expect("withdraw", e.REST("POST", "/transactions/withdraw", m.TestSecret, map[string]any{"beneficiary": ben, "rate_reference": "q\x00"}),
			400, "VALIDATION_ERROR", "rate_reference")
		quote := map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1}
		expect("key", e.REST("POST", "/rates/create", m.TestSecret, quote, "Idempotency-Key", "ab\xff\xfecd"), 400, "VALIDATION_ERROR", "Idempotency-Key")
		expect("GraphQL key", e.GQL(m.TestSecret, `mutation { createRate(input: {fromCurrency: "USDT", toCurrency: "NGN", fromAmount: "1", idempotencyKey: "k\u0000"}) { reference } }`, nil),
			400, "VALIDATION_ERROR")
		for _, path := range []string{"/transactions/a%00b", "/transactions/%ff%fe", "/wallets/a%00b", "/wallets/%c3"} {
			expect(path, e.REST("GET", path, m.TestSecret, nil), 404, "NOT_FOUND")
		}
		if r := e.REST("GET", "/transactions/a%00b", "", nil); r.Status != 401 {
			t.Errorf("without a key: %d", r.Status)
		}
	})
}

// A document's size is bounded before validation and the complexity walk,
// both of which expand fragments anew and one of which compares a
// selection set's fields pairwise: each of these answered only after
// seconds to hours (or hundreds of MB) and now gets VALIDATION_ERROR at
// once, while a full introspection query still runs.
func TestGraphQLDocumentSize(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		var frag strings.Builder
		frag.WriteString("query { ...F40 }\nfragment F0 on Query { me { id } }\n")
		for i := 1; i <= 40; i++ {
			fmt.Fprintf(&frag, "fragment F%d on Query { ...F%d ...F%d }\n", i, i-1, i-1)
		}
		var aliases strings.Builder
		aliases.WriteString("query {")
		for i := range 300 {
			fmt.Fprintf(&aliases, " a%d: __schema { types { name fields { name } } }", i)
		}
		aliases.WriteString(" }")
		repeated := "{" + strings.Repeat(" me { id }", 20000) + " }"
		for name, q := range map[string]string{"doubling fragments": frag.String(), "introspection aliases": aliases.String(), "repeated field": repeated} {
			start := time.Now()
			r := e.GQL(m.TestSecret, q, nil)
			if r.Code() != "VALIDATION_ERROR" || time.Since(start) > 5*time.Second {
				t.Errorf("%s: %s after %s: %.200s", name, r.Code(), time.Since(start), r.Body)
			}
		}
		intro := e.GQL(m.TestSecret, `query { __schema { queryType { name } types { name kind fields(includeDeprecated: true) { name args { name type { name kind ofType { name kind ofType { name kind } } } } type { name kind ofType { name kind ofType { name kind } } } } inputFields { name } enumValues { name } } } }`, nil)
		if len(intro.GQLData()["__schema"].(map[string]any)["types"].([]any)) < 10 {
			t.Errorf("introspection: %.300s", intro.Body)
		}
	})
}

// A tampered cursor (a time PostgreSQL cannot hold, a negative one, an id
// that is not text, an id of a form the list's ids never have) is a bad
// query parameter, on every list and connection: never a 500, nor an
// empty page.
func TestTamperedCursor(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		forged := []string{enc("99999999999999999|a"), enc("-5|a"), enc("1700000000000|a\x00b"), enc("1700000000000|\xff"),
			enc("1|x' OR 1=1--"), enc("1700000000000|0190b5a4-7c1e-7a00-8000-00000000000Z"), enc("1700000000000|ffffffff-ffff-ffff-ffff-ffffffffffff "),
			enc("1700000000000|we_0190b5a4-7c1e-7a00-8000-000000000000x"), enc("1700000000000|dlv_x"), enc("1700000000000|1 OR 1=1")}
		for _, c := range forged {
			for _, path := range []string{"/transactions", "/wallets", "/webhooks", "/balances", "/balances/NGN/history"} {
				if r := e.REST("GET", path+"?cursor="+c, m.TestSecret, nil); r.Status != 400 || r.Code() != "VALIDATION_ERROR" {
					t.Errorf("%s with %s: %d %s", path, c, r.Status, r.Body)
				}
			}
			for _, q := range []string{`query($c: String) { transactions(after: $c) { edges { cursor } } }`, `query($c: String) { wallets(after: $c) { edges { cursor } } }`,
				`query($c: String) { events(after: $c) { edges { cursor } } }`, `query($c: String) { webhookDeliveries(after: $c) { edges { cursor } } }`,
				`query($c: String) { balanceHistory(currency: "NGN", after: $c) { edges { cursor } } }`} {
				if r := e.GQL(m.TestSecret, q, map[string]any{"c": c}); r.Code() != "VALIDATION_ERROR" {
					t.Errorf("%s with %s: %s", q, c, r.Body)
				}
			}
		}
	})
}
