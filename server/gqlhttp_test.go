package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"merchantpay/server/servertest"
)

const (
	acceptJSON    = "application/json"
	acceptGraphQL = "application/graphql-response+json"
)

// gqlGet sends GET /graphql with params in its URL.
func gqlGet(e *servertest.Env, key string, params url.Values, headers ...string) *servertest.Resp {
	e.T.Helper()
	return e.Do(http.MethodGet, "/graphql?"+params.Encode(), key, nil, headers...)
}

// expectAnswer checks an answer's status, media type, extensions.code of
// its first error ("" for none) and whether it has a data entry.
func expectAnswer(t *testing.T, what string, r *servertest.Resp, status int, media, code string, hasData bool) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s: status %d, want %d; body %s", what, r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != media {
		t.Errorf("%s: Content-Type %q, want %q", what, ct, media)
	}
	if got := r.Code(); got != code {
		t.Errorf("%s: code %q, want %q; body %s", what, got, code, r.Body)
	}
	if _, ok := r.JSON["data"]; ok != hasData {
		t.Errorf("%s: data entry present %v, want %v; body %s", what, ok, hasData, r.Body)
	}
}

// The status and media type of every kind of GraphQL answer over HTTP, in
// both media types: request errors (parse, validation, variables, a
// subscription) are 200 in application/json and 400 without data in
// application/graphql-response+json; malformed parameters are 400 in both;
// refusals before execution keep their status and honour Accept.
func TestGraphQLHTTPStatusAndAccept(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		post := func(body any, accept string, headers ...string) *servertest.Resp {
			return e.Do(http.MethodPost, "/graphql", m.TestSecret, body, append([]string{"Accept", accept}, headers...)...)
		}
		// Negotiation.
		for _, tc := range []struct{ accept, media string }{
			{"", acceptJSON},
			{"*/*", acceptJSON},
			{"application/*", acceptJSON},
			{"text/html", acceptJSON},
			{acceptJSON, acceptJSON},
			{acceptGraphQL, acceptGraphQL},
			{"application/graphql-response+json, application/json;q=0.9", acceptGraphQL},
			{"application/json, application/graphql-response+json", acceptJSON},
			{"application/graphql-response+json, application/json", acceptGraphQL},
			{"application/json;q=0.5, application/graphql-response+json", acceptGraphQL},
			{"application/graphql-response+json;q=0, */*", acceptJSON},
			{"*/*, application/graphql-response+json;q=0.9", acceptJSON},
		} {
			r := post(map[string]any{"query": "{ me { id } }"}, tc.accept)
			expectAnswer(t, "accept "+tc.accept, r, 200, tc.media, "", true)
			if me, _ := r.Data()["me"].(map[string]any); me["id"] != m.ID {
				t.Errorf("accept %q: %s", tc.accept, r.Body)
			}
		}
		// Request errors, by media type.
		for _, tc := range []struct {
			what, code string
			body       map[string]any
		}{
			{"parse", "BAD_REQUEST", map[string]any{"query": "{"}},
			{"validation", "VALIDATION_ERROR", map[string]any{"query": "{ nope }"}},
			{"variables", "VALIDATION_ERROR", map[string]any{"query": "query($id: ID!) { __typename }", "variables": map[string]any{"id": nil}}},
			{"subscription", "VALIDATION_ERROR", map[string]any{"query": "subscription { events { id } }"}},
			{"unknown operationName", "VALIDATION_ERROR", map[string]any{"query": "query A { __typename }", "operationName": "B"}},
			{"mutation that does not validate", "VALIDATION_ERROR", map[string]any{"query": "mutation { createWallet(input: {}) { nope } }"}},
		} {
			expectAnswer(t, tc.what+" as JSON", post(tc.body, acceptJSON), 200, acceptJSON, tc.code, true)
			expectAnswer(t, tc.what+" as graphql-response", post(tc.body, acceptGraphQL), 400, acceptGraphQL, tc.code, false)
		}
		// A mutation's answer is stored for its Idempotency-Key; its replay
		// has the first answer's status.
		for i := range 2 {
			r := post(map[string]any{"query": "mutation { createWallet(input: {}) { nope } }"}, acceptGraphQL, "Idempotency-Key", "invalid-mutation")
			expectAnswer(t, "keyed invalid mutation", r, 400, acceptGraphQL, "VALIDATION_ERROR", false)
			if replayed := r.Header.Get("Idempotent-Replayed") == "true"; replayed != (i == 1) {
				t.Errorf("keyed invalid mutation, request %d: replayed %v", i+1, replayed)
			}
		}
		// Malformed parameters: 400 whatever the media type.
		for _, tc := range []struct {
			what, code string
			body       string
		}{
			{"not JSON", "BAD_REQUEST", `{"query": `},
			{"not an object", "BAD_REQUEST", `["{ me { id } }"]`},
			{"null", "BAD_REQUEST", `null`},
			{"no query", "VALIDATION_ERROR", `{"qeury": "{ me { id } }"}`},
			{"query not a string", "VALIDATION_ERROR", `{"query": 0}`},
			{"operationName not a string", "VALIDATION_ERROR", `{"query": "{ me { id } }", "operationName": false}`},
			{"variables not an object", "VALIDATION_ERROR", `{"query": "{ me { id } }", "variables": "x"}`},
			{"extensions not an object", "VALIDATION_ERROR", `{"query": "{ me { id } }", "extensions": ["x"]}`},
		} {
			expectAnswer(t, tc.what+" as JSON", post(tc.body, acceptJSON), 400, acceptJSON, tc.code, true)
			expectAnswer(t, tc.what+" as graphql-response", post(tc.body, acceptGraphQL), 400, acceptGraphQL, tc.code, false)
		}
		// null parameters are as good as absent.
		r := post(`{"query": "{ me { id } }", "operationName": null, "variables": null, "extensions": null}`, acceptGraphQL)
		expectAnswer(t, "null parameters", r, 200, acceptGraphQL, "", true)
		// Refusals before execution keep their status; their media type
		// follows Accept.
		for _, accept := range []string{acceptJSON, acceptGraphQL} {
			data := accept == acceptJSON
			expectAnswer(t, "no key, "+accept, e.Do(http.MethodPost, "/graphql", "", map[string]any{"query": "{ me { id } }"}, "Accept", accept), 401, accept, "UNAUTHORIZED", data)
			expectAnswer(t, "public key, "+accept, e.Do(http.MethodPost, "/graphql", m.TestPublic, map[string]any{"query": "{ me { id } }"}, "Accept", accept), 403, accept, "FORBIDDEN", data)
			r := e.Do(http.MethodPut, "/graphql", m.TestSecret, map[string]any{"query": "{ me { id } }"}, "Accept", accept)
			expectAnswer(t, "PUT, "+accept, r, 405, accept, "METHOD_NOT_ALLOWED", data)
			if r.Header.Get("Allow") != "GET, POST" {
				t.Errorf("PUT: Allow %q", r.Header.Get("Allow"))
			}
			expectAnswer(t, "text/plain body, "+accept, post(`{"query": "{ me { id } }"}`, accept, "Content-Type", "text/plain"), 415, accept, "UNSUPPORTED_MEDIA_TYPE", data)
			big := `{"query": "{ me { id } }", "pad": "` + strings.Repeat("x", 1<<20) + `"}`
			expectAnswer(t, "body over 1 MiB, "+accept, post(big, accept), 413, accept, "PAYLOAD_TOO_LARGE", data)
		}
	})
}

// GET /graphql runs queries from its URL, with variables and
// operationName, in either media type; a mutation is 405 with Allow: POST
// and changes nothing; a subscription is a request error; a GET without a
// query is 400 saying so.
func TestGraphQLGet(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		for _, accept := range []string{"", acceptJSON, acceptGraphQL} {
			media := accept
			if media == "" {
				media = acceptJSON
			}
			r := gqlGet(e, m.TestSecret, url.Values{"query": {"query Me($n: String!) { me { id } __type(name: $n) { name } } query Other { __typename }"},
				"variables": {`{"n": "Wallet"}`}, "operationName": {"Me"}}, "Accept", accept)
			expectAnswer(t, "GET with "+accept, r, 200, media, "", true)
			if me, _ := r.Data()["me"].(map[string]any); me["id"] != m.ID {
				t.Errorf("GET: %s", r.Body)
			}
			if tp, _ := r.Data()["__type"].(map[string]any); tp["name"] != "Wallet" {
				t.Errorf("GET variables: %s", r.Body)
			}
		}
		// Bearer authentication, as for POST.
		r := gqlGet(e, "", url.Values{"query": {"{ me { id } }"}}, "Authorization", "Bearer "+m.TestSecret)
		expectAnswer(t, "GET with a bearer key", r, 200, acceptJSON, "", true)
		expectAnswer(t, "GET without a key", gqlGet(e, "", url.Values{"query": {"{ me { id } }"}}, "Accept", acceptGraphQL), 401, acceptGraphQL, "UNAUTHORIZED", false)

		create := `mutation { createWallet(input: {walletReference: "by-get", compliance: {phone: "08012345678", firstname: "Ada", lastname: "Obi", email: "ada@example.com", documents: [{documentType: "NIN", documentFile: "https://x.example/nin.png", documentFileType: "url", documentNo: "123"}]}}) { walletReference } }`
		for _, accept := range []string{acceptJSON, acceptGraphQL} {
			r := gqlGet(e, m.TestSecret, url.Values{"query": {create}}, "Accept", accept)
			expectAnswer(t, "mutation over GET, "+accept, r, 405, accept, "METHOD_NOT_ALLOWED", accept == acceptJSON)
			if r.Header.Get("Allow") != "POST" {
				t.Errorf("mutation over GET: Allow %q", r.Header.Get("Allow"))
			}
			// Chosen by operationName among a query and a mutation.
			r = gqlGet(e, m.TestSecret, url.Values{"query": {"query Q { __typename } " + strings.Replace(create, "mutation", "mutation M", 1)}, "operationName": {"M"}}, "Accept", accept)
			expectAnswer(t, "named mutation over GET, "+accept, r, 405, accept, "METHOD_NOT_ALLOWED", accept == acceptJSON)
		}
		if l := e.REST("GET", "/wallets", m.TestSecret, nil).Expect(200).List(); len(l) != 0 {
			t.Errorf("a mutation over GET created %v", l)
		}
		// The same mutation over POST does run.
		e.GQL(m.TestSecret, create, nil).GQLData()

		expectAnswer(t, "subscription over GET", gqlGet(e, m.TestSecret, url.Values{"query": {"subscription { events { id } }"}}, "Accept", acceptGraphQL), 400, acceptGraphQL, "VALIDATION_ERROR", false)
		expectAnswer(t, "validation over GET", gqlGet(e, m.TestSecret, url.Values{"query": {"{ nope }"}}, "Accept", acceptJSON), 200, acceptJSON, "VALIDATION_ERROR", true)
		r = e.Do(http.MethodGet, "/graphql", m.TestSecret, nil, "Accept", acceptJSON)
		expectAnswer(t, "GET without a query", r, 400, acceptJSON, "VALIDATION_ERROR", true)
		if !strings.Contains(string(r.Body), `"field":"query"`) {
			t.Errorf("GET without a query: %s", r.Body)
		}
		expectAnswer(t, "GET with bad variables", gqlGet(e, m.TestSecret, url.Values{"query": {"{ me { id } }"}, "variables": {"{"}}, "Accept", acceptGraphQL), 400, acceptGraphQL, "VALIDATION_ERROR", false)
	})
}

// GET meets the limits POST meets: the cost limit and the per-key rate
// limit (429 with Retry-After, in the negotiated media type).
func TestGraphQLGetLimits(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		costly := url.Values{"query": {"{ wallets(first: 100) { edges { node { walletReference accounts { accountNumber } } } } }"}}
		expectAnswer(t, "costly GET", gqlGet(e, m.TestSecret, costly, "Accept", acceptGraphQL), 400, acceptGraphQL, "QUERY_TOO_COMPLEX", false)
		expectAnswer(t, "costly GET as JSON", gqlGet(e, m.TestSecret, costly, "Accept", acceptJSON), 200, acceptJSON, "QUERY_TOO_COMPLEX", true)
		limited := 0
		for range 6 {
			r := gqlGet(e, m.TestSecret, url.Values{"query": {"{ me { id } }"}}, "Accept", acceptGraphQL)
			if r.Status == 429 {
				expectAnswer(t, "rate-limited GET", r, 429, acceptGraphQL, "RATE_LIMITED", false)
				if r.Header.Get("Retry-After") == "" {
					t.Errorf("429 without Retry-After")
				}
				limited++
			}
		}
		if limited == 0 {
			t.Errorf("no GET refused at RATE_LIMIT=1, burst 2")
		}
	}, servertest.With("GRAPHQL_MAX_COST", "50"), servertest.With("RATE_LIMIT", "1"), servertest.With("RATE_LIMIT_BURST", "2"))
}

// A document that fails validation over WebSocket is answered with an
// error message carrying the GraphQL errors (graphql-transport-ws: no
// complete follows; the legacy graphql-ws: error, then complete), and the
// connection stays usable.
func TestWebSocketValidationError(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			for _, q := range []string{`subscription { nope }`, `subscription {`, `subscription($a: ID!) { events(after: $a) { id } }`} {
				sub := subscribeWS(t, e, proto, m.TestSecret, q, nil)
				typ, payload := readMessage(t, sub.c)
				var errs []struct {
					Message    string         `json:"message"`
					Extensions map[string]any `json:"extensions"`
				}
				if typ != "error" || json.Unmarshal(payload, &errs) != nil || len(errs) == 0 || errs[0].Message == "" {
					t.Errorf("%s %s: %s %s, want an error message with the GraphQL errors", proto, q, typ, payload)
					continue
				}
				if code := errs[0].Extensions["code"]; code != "VALIDATION_ERROR" && code != "BAD_REQUEST" {
					t.Errorf("%s %s: code %v", proto, q, code)
				}
				if proto == "graphql-ws" {
					if typ, _ := readMessage(t, sub.c); typ != "complete" {
						t.Errorf("%s %s: then %s, want complete", proto, q, typ)
					}
					continue
				}
				if err := sub.c.WriteJSON(map[string]any{"type": "ping"}); err != nil {
					t.Fatal(err)
				}
				if typ, _ := readMessage(t, sub.c); typ != "pong" {
					t.Errorf("%s %s: then %s, want pong (no complete after error)", proto, q, typ)
				}
			}
		}
	})
}

// readMessage reads the next message but keep-alives: its type and
// payload.
func readMessage(t *testing.T, c *websocket.Conn) (string, json.RawMessage) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var msg struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := c.ReadJSON(&msg); err != nil {
			t.Fatalf("read: %v", err)
		}
		if msg.Type != "ka" {
			return msg.Type, msg.Payload
		}
	}
}
