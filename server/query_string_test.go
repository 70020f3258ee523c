package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"merchantpay/server/servertest"
)

// A query string that cannot be read (a bad percent-escape, ';' between
// parameters) is 400 VALIDATION_ERROR naming the parameter, over REST and
// GraphQL GET, instead of being read without it (the first page, say).
func TestBadQueryStringIsRefused(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		for _, tc := range []struct{ query, fields string }{
			{"cursor=%zz", "[cursor]"},
			{"limit=1&cursor=%", "[cursor]"},
			{"limit=1;cursor=x", "[limit]"},
			{"%zz=1&cursor=%g0", "[query string cursor]"},
			{strings.Repeat("limit=1&", 10001), "[query string]"},
		} {
			r := e.REST("GET", "/wallets?"+tc.query, m.TestSecret, nil)
			if r.Status != 400 || r.Code() != "VALIDATION_ERROR" || fmt.Sprint(r.Fields()) != tc.fields {
				t.Errorf("GET /wallets?%s: %d %s; want 400 VALIDATION_ERROR naming %s", tc.query, r.Status, r.Body, tc.fields)
			}
		}
		// A write is refused before it runs, and a key kept for nothing.
		r := e.REST("POST", "/wallets?x=%zz", m.TestSecret, sampleWallet("bad-query"), "Idempotency-Key", "bad-query")
		if r.Status != 400 || r.Code() != "VALIDATION_ERROR" || fmt.Sprint(r.Fields()) != "[x]" {
			t.Errorf("POST /wallets?x=%%zz: %d %s", r.Status, r.Body)
		}
		if n := len(e.REST("GET", "/wallets", m.TestSecret, nil).Expect(200).List()); n != 0 {
			t.Errorf("%d wallets created", n)
		}
		e.REST("POST", "/wallets", m.TestSecret, sampleWallet("bad-query"), "Idempotency-Key", "bad-query").Expect(201)
		// Without a key the refusal comes after authentication, as ever.
		e.REST("GET", "/wallets?cursor=%zz", "", nil).Expect(401)

		for q, fields := range map[string]string{
			"query=%7B__typename%7D&variables=%zz": "[variables]",
			// An unreadable name is not taken for the document's parameter.
			"query=%7B__typename%7D&%zz=1":                   "[query string]",
			strings.Repeat("query=%7B__typename%7D&", 10001): "[query string]",
		} {
			g := e.Do(http.MethodGet, "/graphql?"+q, m.TestSecret, nil)
			if g.Status != 400 || g.Code() != "VALIDATION_ERROR" || fmt.Sprint(gqlFields(g)) != fields {
				t.Errorf("GET /graphql?%.60s: %d %s, want VALIDATION_ERROR naming %s", q, g.Status, g.Body, fields)
			}
		}
		e.Do(http.MethodGet, "/graphql?query=%7B__typename%7D", m.TestSecret, nil).Expect(200)
	})
}
