package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/nodetest"
	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// The GraphQL-over-HTTP audit of graphql-http 1.23.1 (npm), run against
// the service with a test key: no MUST and no SHOULD fails. Once, on
// SQLite: the transport does not depend on the database.
func TestGraphQLHTTPAudit(t *testing.T) {
	nodetest.Dir(t)
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	m := e.Merchant("Audited Shop")
	out := nodetest.Run(t, 2*time.Minute, nil, "audit.mjs", e.URL+"/graphql", m.TestSecret)
	var results []struct{ ID, Name, Status, Reason string }
	if err := json.Unmarshal(out, &results); err != nil || len(results) < 50 {
		t.Fatalf("audit output %q: %v", out, err)
	}
	counts := map[string]int{}
	for _, r := range results {
		counts[r.Status]++
		switch r.Status {
		case "ok":
		case "notice":
			t.Logf("MAY not met: %s %s: %s", r.ID, r.Name, r.Reason)
		default:
			t.Errorf("%s: %s %s: %s", r.Status, r.ID, r.Name, r.Reason)
		}
	}
	t.Logf("audits: %v", counts)
}

// urql (@urql/core 6, default settings: a short query goes as GET) and
// Apollo Client 4 (HttpLink, POST) run a query and a mutation with a test
// key, and read a validation failure as GraphQL errors.
func TestGraphQLHTTPClients(t *testing.T) {
	nodetest.Dir(t)
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	m := e.Merchant("Client Shop")
	out := nodetest.Run(t, 2*time.Minute, nil, "clients.mjs", e.URL+"/graphql", m.TestSecret)
	type request struct {
		Method, ContentType string
		Status              int
	}
	var got map[string]struct {
		Me                        struct{ ID, Mode string }
		QueryError, MutationError *string
		Wallet                    struct{ WalletReference string }
		InvalidCode               *string
		Requests                  []request
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got) != 2 {
		t.Fatalf("clients output %q: %v", out, err)
	}
	for name, ref := range map[string]string{"urql": "urql-1", "apollo": "apollo-1"} {
		c := got[name]
		if c.Me.ID != m.ID || c.Me.Mode != "TEST" || c.QueryError != nil {
			t.Errorf("%s query: %+v", name, c)
		}
		if c.Wallet.WalletReference != ref || c.MutationError != nil {
			t.Errorf("%s mutation: %+v", name, c)
		}
		if c.InvalidCode == nil || *c.InvalidCode != "VALIDATION_ERROR" {
			t.Errorf("%s validation failure: %s", name, out)
		}
		if len(c.Requests) != 3 {
			t.Fatalf("%s requests: %+v", name, c.Requests)
		}
		for _, r := range c.Requests {
			if !strings.HasPrefix(r.ContentType, "application/graphql-response+json") {
				t.Errorf("%s: answered %+v, want application/graphql-response+json (both clients ask for it first)", name, r)
			}
		}
		e.REST("GET", "/wallets/"+ref, m.TestSecret, nil).Expect(200)
	}
	// urql's default sends the query as GET and the mutation as POST;
	// Apollo's posts both.
	wantMethods := map[string][]string{"urql": {http.MethodGet, http.MethodPost, http.MethodGet}, "apollo": {http.MethodPost, http.MethodPost, http.MethodPost}}
	for name, want := range wantMethods {
		for i, r := range got[name].Requests {
			if r.Method != want[i] {
				t.Errorf("%s request %d: %+v, want %s", name, i, r, want[i])
			}
		}
		if r := got[name].Requests; r[0].Status != 200 || r[1].Status != 200 || r[2].Status != 400 {
			t.Errorf("%s statuses: %+v, want 200, 200, 400", name, r)
		}
	}
}
