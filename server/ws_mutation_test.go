package server_test

import (
	"encoding/json"
	"testing"
	"time"

	"merchantpay/server/servertest"
)

// wsResult sends one operation over an open connection and returns its
// result payload, checking that the operation then completes.
func (g *gqlWS) result(id, query string, vars map[string]any) []byte {
	g.t.Helper()
	start := "subscribe"
	if g.proto == "graphql-ws" {
		start = "start"
	}
	if err := g.c.WriteJSON(map[string]any{"id": id, "type": start, "payload": map[string]any{"query": query, "variables": vars}}); err != nil {
		g.t.Fatal(err)
	}
	var out []byte
	_ = g.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var msg struct {
			ID      string          `json:"id"`
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		if err := g.c.ReadJSON(&msg); err != nil {
			g.t.Fatalf("read: %v", err)
		}
		switch {
		case msg.Type == "ka" || msg.Type == "ping" || msg.Type == "pong":
		case msg.ID == "1": // the connection's subscription
		case msg.ID == id && (msg.Type == "next" || msg.Type == "data"):
			out = msg.Payload
		case msg.ID == id && msg.Type == "complete":
			if out == nil {
				g.t.Fatalf("operation %s completed without a result", id)
			}
			return out
		default:
			g.t.Fatalf("unexpected %s %s: %s", msg.ID, msg.Type, msg.Payload)
		}
	}
}

// Mutations sent over WebSocket run as POST /graphql runs them: in one
// transaction, idempotent by the input's idempotencyKey, and replayed byte
// for byte, on both subprotocols.
func TestWebSocketMutationsIdempotent(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			m := e.Merchant("WS Co " + proto)
			fund(e, m.TestSecret, "NGN", 5000)
			g := subscribeWS(t, e, proto, m.TestSecret, `subscription { events { id } }`, nil)
			const withdraw = `mutation($k: String, $a: Decimal!, $r: String) { withdraw(input: {amount: $a, currency: "NGN", reference: $r, idempotencyKey: $k,
				beneficiary: {email: "ada@example.com", bank: "058", accountName: "Ada Obi", accountNumber: "0123456789"}}) { reference status amount } }`
			first := g.result("w1", withdraw, map[string]any{"k": "ws-key-1", "a": "1000", "r": "ws-1"})
			again := g.result("w2", withdraw, map[string]any{"k": "ws-key-1", "a": "1000", "r": "ws-1"})
			if string(first) != string(again) {
				t.Errorf("%s: replay differs:\n%s\n%s", proto, first, again)
			}
			var res struct {
				Data struct {
					Withdraw struct{ Reference, Status string } `json:"withdraw"`
				} `json:"data"`
				Errors []struct {
					Extensions struct{ Code string } `json:"extensions"`
				} `json:"errors"`
			}
			if err := json.Unmarshal(first, &res); err != nil || res.Data.Withdraw.Reference == "" {
				t.Fatalf("%s: first withdrawal: %s", proto, first)
			}
			// The same key with another request: refused, nothing done.
			reused := g.result("w3", withdraw, map[string]any{"k": "ws-key-1", "a": "2000", "r": "ws-2"})
			if err := json.Unmarshal(reused, &res); err != nil || len(res.Errors) != 1 || res.Errors[0].Extensions.Code != "IDEMPOTENCY_KEY_REUSED" {
				t.Errorf("%s: reused key: %s", proto, reused)
			}
			// A refused withdrawal changes nothing; its answer is stored and replayed.
			res.Errors = nil
			poor := g.result("w4", withdraw, map[string]any{"k": "ws-key-2", "a": "999999", "r": "ws-3"})
			if err := json.Unmarshal(poor, &res); err != nil || len(res.Errors) != 1 || res.Errors[0].Extensions.Code != "INSUFFICIENT_BALANCE" {
				t.Errorf("%s: over the balance: %s", proto, poor)
			}
			if again := g.result("w5", withdraw, map[string]any{"k": "ws-key-2", "a": "999999", "r": "ws-3"}); string(again) != string(poor) {
				t.Errorf("%s: refusal replay differs:\n%s\n%s", proto, poor, again)
			}
			list := e.GQL(m.TestSecret, `{ transactions(first: 10, filter: {type: WITHDRAWAL}) { edges { node { reference } } } }`, nil).GQLData()
			if n := len(list["transactions"].(map[string]any)["edges"].([]any)); n != 1 {
				t.Errorf("%s: %d withdrawals, want 1", proto, n)
			}
			// The same key over HTTP replays the WebSocket's answer.
			body := map[string]any{"query": withdraw, "variables": map[string]any{"k": "ws-key-1", "a": "1000", "r": "ws-1"}}
			r := e.Do("POST", "/graphql", m.TestSecret, body)
			if string(r.Body) != string(first)+"\n" && string(r.Body) != string(first) {
				t.Errorf("%s: HTTP replay differs:\n%s\n%s", proto, r.Body, first)
			}
			// Queries still go to the executor.
			if me := g.result("q1", `{ me { name } }`, nil); string(me) != `{"data":{"me":{"name":"WS Co `+proto+`"}}}` {
				t.Errorf("%s: query: %s", proto, me)
			}
		}
	})
}
