package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"merchantpay/server/servertest"
)

func dialWS(t *testing.T, e *servertest.Env, proto string, hdr http.Header) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{proto}, HandshakeTimeout: 5 * time.Second}
	c, res, err := d.Dial("ws"+strings.TrimPrefix(e.URL, "http")+"/graphql", hdr)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", proto, err, res)
	}
	if c.Subprotocol() != proto {
		t.Fatalf("subprotocol %q, want %q", c.Subprotocol(), proto)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func readType(t *testing.T, c *websocket.Conn) (string, error) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		var msg struct {
			Type string `json:"type"`
		}
		if err := c.ReadJSON(&msg); err != nil {
			return "", err
		}
		if msg.Type == "ka" || msg.Type == "ping" {
			continue
		}
		return msg.Type, nil
	}
}

func TestWebSocketAuthentication(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			t.Run(proto, func(t *testing.T) {
				// A valid key in connection_init is acknowledged.
				c := dialWS(t, e, proto, nil)
				if err := c.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"X-API-KEY": m.TestSecret}}); err != nil {
					t.Fatal(err)
				}
				if typ, err := readType(t, c); err != nil || typ != "connection_ack" {
					t.Fatalf("got %q, %v; want connection_ack", typ, err)
				}
				// Bearer form in the payload.
				c = dialWS(t, e, proto, nil)
				_ = c.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + m.TestSecret}})
				if typ, err := readType(t, c); err != nil || typ != "connection_ack" {
					t.Fatalf("bearer: got %q, %v", typ, err)
				}
				// The key in the upgrade headers.
				c = dialWS(t, e, proto, http.Header{"X-API-KEY": {m.TestSecret}})
				_ = c.WriteJSON(map[string]any{"type": "connection_init"})
				if typ, err := readType(t, c); err != nil || typ != "connection_ack" {
					t.Fatalf("header key: got %q, %v", typ, err)
				}
				// A bad key closes the connection; a public key too.
				for name, key := range map[string]string{"bad": "SECK_TEST_nope-nope-nope", "public": m.TestPublic, "none": ""} {
					c = dialWS(t, e, proto, nil)
					payload := map[string]any{}
					if key != "" {
						payload["X-API-KEY"] = key
					}
					_ = c.WriteJSON(map[string]any{"type": "connection_init", "payload": payload})
					closed := false
					for i := 0; i < 3 && !closed; i++ {
						typ, err := readType(t, c)
						var ce *websocket.CloseError
						switch {
						case errors.As(err, &ce):
							closed = true
							if ce.Code != 4403 {
								t.Errorf("%s: close code %d, want 4403", name, ce.Code)
							}
						case err != nil:
							closed = true
						case typ == "connection_ack":
							t.Fatalf("%s key acknowledged", name)
						}
					}
					if !closed {
						t.Errorf("%s key: connection not closed", name)
					}
				}
			})
		}
		// A bad key in the upgrade headers is refused before the upgrade.
		d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}}
		_, res, err := d.Dial("ws"+strings.TrimPrefix(e.URL, "http")+"/graphql", http.Header{"X-API-KEY": {"SECK_TEST_bad-bad-bad"}})
		if err == nil || res == nil || res.StatusCode != 401 {
			t.Errorf("bad header key upgrade: %v %v", err, res)
		}
	})
}

// readClose reads until the server closes c and returns its close code;
// anything else it reads first (an event) fails the test.
func readClose(t *testing.T, c *websocket.Conn) int {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var msg struct {
			Type    string          `json:"type"`
			Payload json.RawMessage `json:"payload"`
		}
		err := c.ReadJSON(&msg)
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		switch msg.Type {
		case "ka", "ping", "pong", "connection_error":
			continue
		}
		t.Fatalf("after the key was rolled the connection got %s: %s", msg.Type, msg.Payload)
	}
}

// Rolling a key voids it at once on connections already open with it: a
// subscription gets no event made after the roll and its connection is closed
// with 4401; a connection that starts an operation after the roll (a mutation
// above all) is closed with 4401 and the operation does not run. Other keys'
// subscriptions go on.
func TestRolledKeyClosesOpenSockets(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		other := e.Merchant("Other")
		otherAcc := e.REST("POST", "/accounts", other.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		query := `subscription { events { id event } }`
		subs := map[string]*gqlWS{}
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			subs[proto] = subscribeWS(t, e, proto, m.TestSecret, query, nil)
		}
		otherSub := subscribeWS(t, e, "graphql-transport-ws", other.TestSecret, query, nil)
		// A subscribe message is answered only by events: wait until the
		// three are registered, or the first deposit could come before them.
		servertest.Eventually(t, 10*time.Second, "the three subscriptions", func() bool { return e.App.Broker.Subscribers() == 3 })
		idle := dialWS(t, e, "graphql-transport-ws", http.Header{"X-API-KEY": {m.TestSecret}})
		if err := idle.WriteJSON(map[string]any{"type": "connection_init"}); err != nil {
			t.Fatal(err)
		}
		if typ, err := readType(t, idle); err != nil || typ != "connection_ack" {
			t.Fatalf("ack: %q %v", typ, err)
		}
		// Subscribed and live: an event before the roll arrives.
		depositTo(t, e, m.TestSecret, acc, "100")
		for _, s := range subs {
			s.next()
		}

		rolled, err := e.App.Merchants.RollKeys(context.Background(), m.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		depositTo(t, e, rolled.SecretKey, acc, "200")
		for proto, s := range subs {
			if code := readClose(t, s.c); code != 4401 {
				t.Errorf("%s subscription: closed with %d, want 4401", proto, code)
			}
		}
		// An operation started after the roll: refused, the connection closed, nothing done.
		fund := `mutation { fundBalance(input: {currency: "NGN", amount: "5"}) { available } }`
		if err := idle.WriteJSON(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": fund}}); err != nil {
			t.Fatal(err)
		}
		if code := readClose(t, idle); code != 4401 {
			t.Errorf("operation after the roll: closed with %d, want 4401", code)
		}
		bal := e.GQL(rolled.SecretKey, `{balances{currency available}}`, nil).GQLData()["balances"].([]any)
		for _, b := range bal {
			if b := b.(map[string]any); b["currency"] == "NGN" && b["available"] != "300" {
				t.Errorf("NGN balance %v, want 300 (the deposits only)", b["available"])
			}
		}
		// Another merchant's key was not rolled: its subscription goes on.
		depositTo(t, e, other.TestSecret, otherAcc, "50")
		if ev := otherSub.next(); ev["event"] != "deposit.success" {
			t.Errorf("the other merchant's subscription: %v", ev)
		}
	})
}

// A subscription selects exactly one root field (GraphQL's "Single root
// field" rule): two are the client's mistake, answered as VALIDATION_ERROR
// for that operation (not INTERNAL_ERROR), and the connection stays usable.
// Subscriptions are served over WebSocket only.
func TestSubscriptionRules(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		for _, q := range []string{
			`subscription { a: events { id } b: events { id } }`,
			`subscription { ...Two } fragment Two on Subscription { a: events { id } b: events { id } }`,
		} {
			sub := subscribeWS(t, e, "graphql-transport-ws", m.TestSecret, q, nil)
			_ = sub.c.SetReadDeadline(time.Now().Add(5 * time.Second))
			// A validation failure: an error message with the errors, and
			// no complete.
			typ, payload := readMessage(t, sub.c)
			var errs []struct {
				Extensions map[string]any `json:"extensions"`
			}
			if typ != "error" || json.Unmarshal(payload, &errs) != nil || len(errs) != 1 || errs[0].Extensions["code"] != "VALIDATION_ERROR" {
				t.Errorf("%s: %s %s", q, typ, payload)
			}
			if err := sub.c.WriteJSON(map[string]any{"type": "ping"}); err != nil {
				t.Fatal(err)
			}
			if typ, err := readType(t, sub.c); err != nil || typ != "pong" {
				t.Errorf("after the refusal: %q %v", typ, err)
			}
			_ = sub.c.Close()
		}
		// Over plain HTTP a subscription is refused at once (it would hold
		// the request until the first event).
		for _, q := range []string{`subscription { a: events { id } b: events { id } }`, `subscription { events { id } }`} {
			if r := e.GQL(m.TestSecret, q, nil); r.Code() != "VALIDATION_ERROR" || !strings.Contains(string(r.Body), "WebSocket") {
				t.Errorf("over HTTP: %s", r.Body)
			}
		}
	})
}

// The per-key rate limit applies to each query and subscription of a WebSocket
// connection too: past it an operation is answered with an error message
// (RATE_LIMITED), and the connection stays open.
func TestWebSocketRateLimit(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Busy Socket")
		c := dialWS(t, e, "graphql-transport-ws", nil)
		defer c.Close()
		if err := c.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]any{"X-API-KEY": m.TestSecret}}); err != nil {
			t.Fatal(err)
		}
		if typ, err := readType(t, c); err != nil || typ != "connection_ack" {
			t.Fatalf("ack: %q %v", typ, err)
		}
		const n = 8
		for i := range n {
			if err := c.WriteJSON(map[string]any{"id": fmt.Sprint(i), "type": "subscribe", "payload": map[string]any{"query": "{ me { id } }"}}); err != nil {
				t.Fatal(err)
			}
		}
		limited, answered := 0, 0
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		for answered < n {
			typ, codes, err := readCodes(c)
			if err != nil {
				t.Fatalf("after %d answers: %v", answered, err)
			}
			// A refused operation gets an error message, one that ran a
			// result.
			if typ != "next" && typ != "error" {
				continue
			}
			answered++
			if len(codes) > 0 {
				if codes[0] != "RATE_LIMITED" || typ != "error" {
					t.Errorf("%s %v, want an error message RATE_LIMITED", typ, codes)
				}
				limited++
			}
		}
		if limited == 0 || limited == n {
			t.Errorf("%d of %d operations limited at RATE_LIMIT=1, burst 2", limited, n)
		}
	}, servertest.With("RATE_LIMIT", "1"), servertest.With("RATE_LIMIT_BURST", "2"))
}

// readCodes reads one message and returns its type and the codes of the
// errors of its payload, if any.
func readCodes(c *websocket.Conn) (typ string, codes []string, err error) {
	var msg struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	}
	if err := c.ReadJSON(&msg); err != nil {
		return "", nil, err
	}
	type gqlError struct {
		Extensions map[string]any `json:"extensions"`
	}
	var errs []gqlError
	if msg.Type == "error" {
		// An error message's payload is the list of errors.
		_ = json.Unmarshal(msg.Payload, &errs)
	} else {
		var result struct {
			Errors []gqlError `json:"errors"`
		}
		_ = json.Unmarshal(msg.Payload, &result)
		errs = result.Errors
	}
	for _, e := range errs {
		code, _ := e.Extensions["code"].(string)
		codes = append(codes, code)
	}
	return msg.Type, codes, nil
}

// The upgrade's 101 answer carries X-Request-Id, as every answer does: a
// fresh id, or the caller's own when it sent a usable one.
func TestWebSocketUpgradeHasRequestID(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		url := "ws" + strings.TrimPrefix(e.URL, "http") + "/graphql"
		for _, sent := range []string{"", "trace-ws-42"} {
			hdr := http.Header{}
			if sent != "" {
				hdr.Set("X-Request-Id", sent)
			}
			d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 5 * time.Second}
			c, res, err := d.Dial(url, hdr)
			if err != nil {
				t.Fatalf("dial: %v (%v)", err, res)
			}
			c.Close()
			got := res.Header.Get("X-Request-Id")
			switch {
			case res.StatusCode != http.StatusSwitchingProtocols:
				t.Errorf("status %d, want 101", res.StatusCode)
			case sent == "" && !strings.HasPrefix(got, "req_"):
				t.Errorf("101 without a request id sent: X-Request-Id %q, want a req_ id", got)
			case sent != "" && got != sent:
				t.Errorf("101 with X-Request-Id %q sent: X-Request-Id %q", sent, got)
			}
		}
	})
}
