package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"merchantpay/server"
	"merchantpay/server/servertest"
)

const dashboardPage = `events(first: 100) { edges { node { id event createdAt transaction { reference status amount currency } } } }`

// gqlAliases is a query of n aliases of sel.
func gqlAliases(n int, sel string) string {
	var b strings.Builder
	b.WriteString("query {")
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, sel)
	}
	b.WriteString(" }")
	return b.String()
}

// The request that kept the service busy for half a minute: 160 aliases of
// a page of 100 events with their deliveries' attempts (10 KB). With 100
// events stored it is now refused at once, before any resolver runs, and
// while four clients send it in a loop another merchant's balances answer
// about as fast as when nobody does. One dashboard page of 100 events
// passes; ten in one request do not.
func TestGraphQLCostRefusesTheAliasAttack(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		other := e.Merchant("Other")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		for range 100 {
			depositTo(t, e, m.TestSecret, acc, "10")
		}
		page := e.GQL(m.TestSecret, "{ "+dashboardPage+" }", nil).GQLData()
		if n := len(page["events"].(map[string]any)["edges"].([]any)); n != 100 {
			t.Fatalf("a dashboard page holds %d events, want 100", n)
		}
		ten := e.GQL(m.TestSecret, gqlAliases(10, dashboardPage), nil)
		if ten.Code() != "QUERY_TOO_COMPLEX" || ten.JSON["data"] != nil {
			t.Errorf("ten dashboard pages: %.300s", ten.Body)
		}

		attack := gqlAliases(160, `events(first:100){edges{node{deliveries{attempts{number}}}}}`)
		start := time.Now()
		r := e.GQL(m.TestSecret, attack, nil)
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("the attack was refused after %s", took)
		}
		if r.Code() != "QUERY_TOO_COMPLEX" || r.JSON["data"] != nil || !strings.Contains(string(r.Body), "over the limit of 2000") {
			t.Fatalf("the attack: %d %.300s", r.Status, r.Body)
		}

		balances := func(n int) time.Duration {
			var took []time.Duration
			for range n {
				start := time.Now()
				e.REST("GET", "/balances", other.TestSecret, nil).Expect(200)
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			return took[len(took)/2]
		}
		unloaded := balances(21)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		body, _ := json.Marshal(map[string]any{"query": attack})
		var mu sync.Mutex
		sent, failures := 0, []string{}
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					req, _ := http.NewRequest("POST", e.URL+"/graphql", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-API-KEY", m.TestSecret)
					res, err := http.DefaultClient.Do(req)
					mu.Lock()
					sent++
					if err != nil {
						failures = append(failures, err.Error())
					} else if b, _ := io.ReadAll(res.Body); !strings.Contains(string(b), "QUERY_TOO_COMPLEX") {
						failures = append(failures, string(b[:min(len(b), 200)]))
					}
					mu.Unlock()
					if res != nil {
						res.Body.Close()
					}
				}
			}()
		}
		loaded := balances(21)
		close(stop)
		wg.Wait()
		if bound := 10*unloaded + 200*time.Millisecond; loaded > bound {
			t.Errorf("balances' median under the attack %s, unloaded %s: over %s", loaded, unloaded, bound)
		}
		if sent == 0 || len(failures) > 0 {
			t.Errorf("%d attacks sent, not refused: %v", sent, failures[:min(len(failures), 3)])
		}
		t.Logf("balances' median %s unloaded, %s under %d attacks", unloaded, loaded, sent)
	})
}

// Costly operations take more of the per-key rate limit: one token per 50
// points. A page of 100 events (about 1,000 points) takes 21 of a burst of
// 50, so the third is refused with 429 and Retry-After, where 40 cheap
// queries pass.
func TestGraphQLCostDrainsTheRateLimit(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		cheap, costly := e.Merchant("Cheap"), e.Merchant("Costly")
		for i := range 40 {
			if r := e.GQL(cheap.TestSecret, `{ me { id } }`, nil); r.Status != 200 || r.Code() != "" {
				t.Fatalf("cheap query %d: %d %s", i, r.Status, r.Body)
			}
		}
		for i := range 2 {
			if r := e.GQL(costly.TestSecret, "{ "+dashboardPage+" }", nil); r.Status != 200 || r.Code() != "" {
				t.Fatalf("costly query %d: %d %s", i, r.Status, r.Body)
			}
		}
		r := e.GQL(costly.TestSecret, "{ "+dashboardPage+" }", nil)
		if r.Status != 429 || r.Code() != "RATE_LIMITED" || r.Header.Get("Retry-After") == "" || r.JSON["data"] != nil {
			t.Fatalf("third costly query: %d %v %s", r.Status, r.Header, r.Body)
		}
		// The refusal took nothing: the key's cheap requests still pass.
		if r := e.GQL(costly.TestSecret, `{ me { id } }`, nil); r.Status != 200 {
			t.Errorf("a cheap query after the refusal: %d %s", r.Status, r.Body)
		}
	}, servertest.With("RATE_LIMIT", "1"), servertest.With("RATE_LIMIT_BURST", "50"))
}

// An operation out of its time budget stops with a clear error and no
// data; a mutation that ran out of it changes nothing.
func TestGraphQLTimeBudget(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		r := e.GQL(m.TestSecret, `{ events(first: 10) { edges { node { id } } } }`, nil)
		if r.Code() != "TIMEOUT" || r.JSON["data"] != nil || !strings.Contains(string(r.Body), "time budget") {
			t.Errorf("query: %d %s", r.Status, r.Body)
		}
		r = e.GQL(m.TestSecret, `mutation { fundBalance(input: {currency: "NGN", amount: "100"}) { available } }`, nil)
		if r.Code() != "TIMEOUT" || r.JSON["data"] != nil {
			t.Errorf("mutation: %d %s", r.Status, r.Body)
		}
		for _, b := range e.REST("GET", "/balances", m.TestSecret, nil).Expect(200).List() {
			if b := b.(map[string]any); b["currency"] == "NGN" && fmt.Sprint(b["available"]) != "0" {
				t.Errorf("the timed-out mutation committed: %v", b)
			}
		}
	}, servertest.With("GRAPHQL_TIMEOUT", "1ns"))
}

// A mutation whose budget runs out while it runs (a hundred credits in a
// row take far more than a millisecond) answers TIMEOUT and commits none
// of them: they share one transaction, rolled back.
func TestGraphQLTimeBudgetRollsBackAMutation(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		r := e.GQL(m.TestSecret, strings.Replace(gqlAliases(100, `fundBalance(input: {currency: "NGN", amount: "1"}) { available }`), "query", "mutation", 1), nil)
		if r.Code() != "TIMEOUT" || r.JSON["data"] != nil {
			t.Fatalf("mutation: %d %.300s", r.Status, r.Body)
		}
		for _, b := range e.REST("GET", "/balances", m.TestSecret, nil).Expect(200).List() {
			if b := b.(map[string]any); b["currency"] == "NGN" && fmt.Sprint(b["available"]) != "0" {
				t.Errorf("part of the timed-out mutation committed: %v", b)
			}
		}
	}, servertest.With("GRAPHQL_TIMEOUT", "1ms"))
}

// An answer over GRAPHQL_MAX_RESPONSE_BYTES is replaced by an error.
func TestGraphQLResponseSizeCap(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		r := e.GQL(m.TestSecret, `{ banks(country: NG) { name code slug } }`, nil)
		if r.Code() != "RESPONSE_TOO_LARGE" || r.JSON["data"] != nil || !strings.Contains(string(r.Body), "over the limit of 2000") {
			t.Errorf("the bank list: %d %.300s", r.Status, r.Body)
		}
		e.GQL(m.TestSecret, `{ me { id name } }`, nil).GQLData()
	}, servertest.With("GRAPHQL_MAX_RESPONSE_BYTES", "2000"))
}

// GraphiQL's own introspection query passes (it nests deeper than the
// depth limit) for one token, and its answer is cached: asking again runs
// nothing.
func TestGraphQLIntrospectionCached(t *testing.T) {
	q, err := os.ReadFile("testdata/graphiql-introspection.graphql")
	if err != nil {
		t.Fatal(err)
	}
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		runs := server.IntrospectionRuns()
		first := e.GQL(m.TestSecret, string(q), nil)
		types, _ := first.GQLData()["__schema"].(map[string]any)["types"].([]any)
		if len(types) < 50 {
			t.Fatalf("introspection: %.300s", first.Body)
		}
		for range 15 { // one token each: a burst of 20 lets 16 through
			again := e.GQL(m.TestSecret, string(q), nil)
			if !bytes.Equal(again.Body, first.Body) {
				t.Fatalf("the cached answer differs: %.300s", again.Body)
			}
		}
		if n := server.IntrospectionRuns() - runs; n != 1 {
			t.Errorf("16 identical introspection queries ran %d times, want once", n)
		}
		// Other variables or another operation name are another entry.
		e.GQL(m.TestSecret, `query Two { __schema { queryType { name } } }`, nil).GQLData()
		e.GQL(m.TestSecret, `query Two { __schema { queryType { name } } }`, nil).GQLData()
		if n := server.IntrospectionRuns() - runs; n != 2 {
			t.Errorf("after another introspection query twice: %d runs, want 2", n)
		}
		// A deep query that is not introspection-only meets the depth limit.
		deep := `{ me { id } __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } }`
		if r := e.GQL(m.TestSecret, deep, nil); r.Code() != "VALIDATION_ERROR" {
			t.Errorf("a deep mixed query: %.300s", r.Body)
		}
	}, servertest.With("RATE_LIMIT", "10"), servertest.With("RATE_LIMIT_BURST", "20"))
}

// Over WebSocket too, an operation's cost is refused over the limit and
// takes its tokens: the third page of 100 events on a socket is refused,
// and the socket stays open.
func TestGraphQLCostOverWebSocket(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Socket")
		c := dialWS(t, e, "graphql-transport-ws", nil)
		defer c.Close()
		if err := c.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"X-API-KEY": m.TestSecret}}); err != nil {
			t.Fatal(err)
		}
		if typ, err := readType(t, c); err != nil || typ != "connection_ack" {
			t.Fatalf("ack: %q %v", typ, err)
		}
		ask := func(id, query string) []string {
			t.Helper()
			if err := c.WriteJSON(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": query}}); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			for {
				typ, codes, err := readCodes(c)
				if err != nil {
					t.Fatalf("%s: %v", id, err)
				}
				if typ == "next" || typ == "error" {
					return codes
				}
			}
		}
		if codes := ask("too-costly", gqlAliases(10, dashboardPage)); !slices.Equal(codes, []string{"QUERY_TOO_COMPLEX"}) {
			t.Errorf("ten pages: %v", codes)
		}
		for _, id := range []string{"page-1", "page-2"} {
			if codes := ask(id, "{ "+dashboardPage+" }"); len(codes) > 0 {
				t.Fatalf("%s: %v", id, codes)
			}
		}
		if codes := ask("page-3", "{ "+dashboardPage+" }"); !slices.Equal(codes, []string{"RATE_LIMITED"}) {
			t.Errorf("third page: %v", codes)
		}
		if codes := ask("cheap", "{ me { id } }"); len(codes) > 0 {
			t.Errorf("a cheap query after the refusal: %v", codes)
		}
	}, servertest.With("RATE_LIMIT", "1"), servertest.With("RATE_LIMIT_BURST", "50"))
}

// A subscription lives past the time budget; each of its events is
// resolved within it, and answered TIMEOUT when it runs out.
func TestSubscriptionEventTimeBudget(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		g := subscribeWS(t, e, "graphql-transport-ws", m.TestSecret, `subscription { events { id transaction { reference } } }`, nil)
		defer g.c.Close()
		// A subscription without after starts from now: the deposit must
		// come after the broker holds it, or its event is rightly missed.
		servertest.Eventually(t, 10*time.Second, "the subscription", func() bool { return e.App.Broker.Subscribers() == 1 })
		for i := range 2 {
			depositTo(t, e, m.TestSecret, acc, "10")
			_ = g.c.SetReadDeadline(time.Now().Add(10 * time.Second))
			for {
				typ, codes, err := readCodes(g.c)
				if err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
				if typ == "ka" || typ == "ping" || typ == "pong" {
					continue
				}
				if typ != "next" || !slices.Equal(codes, []string{"TIMEOUT"}) {
					t.Fatalf("event %d: %s %v", i, typ, codes)
				}
				break
			}
		}
	}, servertest.With("GRAPHQL_TIMEOUT", "1ns"))
}
