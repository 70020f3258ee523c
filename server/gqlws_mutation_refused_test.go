package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"merchantpay/server/servertest"
)

// A mutation refused before it runs (it does not validate, or it costs
// more than the limit) is answered over WebSocket as a refused query is:
// an error message for it, followed by complete over graphql-ws only; one
// that runs is answered with its result and complete. The connection
// stays open.
func TestWebSocketMutationRefusalIsAnError(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		fund := `mutation { fundBalance(input: {currency: "NGN", amount: "5"}) { available } }`
		costly := `mutation { fundBalance(input: {currency: "NGN", amount: "5"}) {` + aliases("available", 60) + ` } }`
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			for q, code := range map[string]string{`mutation { me }`: "VALIDATION_ERROR", costly: "QUERY_TOO_COMPLEX"} {
				sub := subscribeWS(t, e, proto, m.TestSecret, q, nil)
				typ, payload := readMessage(t, sub.c)
				var errs []struct {
					Extensions map[string]any `json:"extensions"`
				}
				if typ != "error" || json.Unmarshal(payload, &errs) != nil || len(errs) != 1 || errs[0].Extensions["code"] != code {
					t.Errorf("%s %s: %s %.300s, want an error message %s", proto, code, typ, payload, code)
					continue
				}
				if proto == "graphql-ws" {
					if typ, _ := readMessage(t, sub.c); typ != "complete" {
						t.Errorf("%s %s: then %s, want complete", proto, code, typ)
					}
				}
				// The connection still runs a mutation: a result, then
				// complete (over graphql-transport-ws, the first operation's
				// complete would have come before).
				start := "subscribe"
				if proto == "graphql-ws" {
					start = "start"
				}
				if err := sub.c.WriteJSON(map[string]any{"id": "2", "type": start, "payload": map[string]any{"query": fund}}); err != nil {
					t.Fatal(err)
				}
				typ, payload = readMessage(t, sub.c)
				if (typ != "next" && typ != "data") || !strings.Contains(string(payload), `"available"`) {
					t.Errorf("%s %s: then a valid mutation: %s %.300s", proto, code, typ, payload)
				}
				if typ, _ := readMessage(t, sub.c); typ != "complete" {
					t.Errorf("%s %s: the valid mutation's %s, want complete", proto, code, typ)
				}
			}
		}
	}, servertest.With("GRAPHQL_MAX_COST", "50"))
}

// aliases is n copies of field, each under its own alias.
func aliases(field string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, field)
	}
	return b.String()
}

// A WebSocket mutation refused by the rate limit is answered with an
// error message too: cheap ones once the key's tokens have run out, and
// one that costs more tokens than are left.
func TestWebSocketMutationRateLimitedIsAnError(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		fund := `mutation { fundBalance(input: {currency: "NGN", amount: "5"}) { available } }`
		costly := `mutation { fundBalance(input: {currency: "NGN", amount: "5"}) {` + aliases("available", 300) + ` } }`
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			m := e.Merchant("Acme " + proto)
			start := "subscribe"
			if proto == "graphql-ws" {
				start = "start"
			}
			c, ack, _, _ := initWS(t, e, proto, m.TestSecret, nil)
			if !ack {
				t.Fatalf("%s: no connection_ack", proto)
			}
			send := func(id, q string) (string, json.RawMessage) {
				t.Helper()
				if err := c.WriteJSON(map[string]any{"id": id, "type": start, "payload": map[string]any{"query": q}}); err != nil {
					t.Fatal(err)
				}
				return readMessage(t, c)
			}
			limited := false
			for i := range 30 {
				typ, payload := send(fmt.Sprint("f", i), fund)
				if typ == "error" {
					if !strings.Contains(string(payload), "RATE_LIMITED") {
						t.Errorf("%s: %.300s", proto, payload)
					}
					limited = true
					break
				}
				if typ != "next" && typ != "data" {
					t.Fatalf("%s: %s %.300s", proto, typ, payload)
				}
				if typ, _ := readMessage(t, c); typ != "complete" {
					t.Fatalf("%s: %s, want complete", proto, typ)
				}
			}
			if !limited {
				t.Errorf("%s: 30 mutations, none refused as an error message", proto)
			}
			if proto == "graphql-ws" {
				readMessage(t, c) // complete
			}
			if typ, payload := send("costly", costly); typ != "error" || !strings.Contains(string(payload), "RATE_LIMITED") {
				t.Errorf("%s: a mutation of more tokens than are left: %s %.300s", proto, typ, payload)
			}
		}
	}, servertest.With("RATE_LIMIT", "1"), servertest.With("RATE_LIMIT_BURST", "10"))
}
