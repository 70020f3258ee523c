package server_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"merchantpay/server"
	"merchantpay/server/servertest"
)

var wsProtocols = []string{"graphql-transport-ws", "graphql-ws"}

// wsMsg is one protocol message as a client reads it.
type wsMsg struct {
	ID      string          `json:"id"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// readWSMsg reads the next message other than a keep-alive, or the error
// (a *websocket.CloseError once the server closed the connection).
func readWSMsg(c *websocket.Conn) (wsMsg, error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		var m wsMsg
		if err := c.ReadJSON(&m); err != nil {
			return m, err
		}
		if m.Type != "ka" && m.Type != "ping" && m.Type != "pong" {
			return m, nil
		}
	}
}

// initWS opens a connection and sends connection_init, with key in its
// payload unless hdr carries it. It returns the connection and the
// server's answer: ack, or the close code and whether a connection_error
// came before the close (the legacy protocol's way).
func initWS(t *testing.T, e *servertest.Env, proto, key string, hdr http.Header) (c *websocket.Conn, ack bool, code int, connErr bool) {
	t.Helper()
	c = dialWS(t, e, proto, hdr)
	payload := map[string]any{}
	if hdr == nil {
		payload["X-API-KEY"] = key
	}
	if err := c.WriteJSON(map[string]any{"type": "connection_init", "payload": payload}); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := readWSMsg(c)
		var ce *websocket.CloseError
		switch {
		case errors.As(err, &ce):
			return c, false, ce.Code, connErr
		case err != nil:
			t.Fatalf("%s: after connection_init: %v", proto, err)
		case m.Type == "connection_ack":
			return c, true, 0, false
		case m.Type == "connection_error":
			connErr = true
		default:
			t.Fatalf("%s: after connection_init: %s %s", proto, m.Type, m.Payload)
		}
	}
}

// upgradeStatus tries an upgrade carrying key in its headers and returns
// the HTTP status and body of a refusal (0 when it was upgraded).
func upgradeStatus(t *testing.T, e *servertest.Env, proto, key string) (int, string) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{proto}, HandshakeTimeout: 5 * time.Second}
	c, res, err := d.Dial("ws"+strings.TrimPrefix(e.URL, "http")+"/graphql", http.Header{"X-API-KEY": {key}})
	if err == nil {
		c.Close()
		return 0, ""
	}
	if res == nil {
		t.Fatalf("upgrade: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// Authenticating in connection_init spends the key's rate limit as the
// key in the upgrade headers does: once the bucket is empty the next
// connection_init is closed with 4429 (the legacy protocol sends a
// connection_error first), and the refused socket is not counted as open.
func TestWebSocketInitSpendsRateLimit(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		for _, proto := range wsProtocols {
			m := e.Merchant("Init Flood " + proto)
			hash := e.Principal(m.TestSecret).KeyHash
			// Burst 2 at one token a second: the third socket at the latest
			// is refused unless opening them takes seconds; ten leave room
			// for a slow machine.
			acked, refused := 0, false
			for i := 0; i < 10 && !refused; i++ {
				c, ack, code, connErr := initWS(t, e, proto, m.TestSecret, nil)
				if ack {
					acked++
					continue
				}
				refused = true
				if code != 4429 {
					t.Errorf("%s: socket %d closed with %d, want 4429", proto, i+1, code)
				}
				if proto == "graphql-ws" && !connErr {
					t.Errorf("%s: no connection_error before the close", proto)
				}
				c.Close()
			}
			if !refused || acked < 1 {
				t.Fatalf("%s: %d sockets acknowledged, refused: %v; want the key's bucket (2) spent", proto, acked, refused)
			}
			if n := e.App.WebSockets.Sockets(hash); n != acked {
				t.Errorf("%s: %d sockets counted for the key, want the %d acknowledged", proto, n, acked)
			}
		}
	}, servertest.With("RATE_LIMIT", "1"), servertest.With("RATE_LIMIT_BURST", "2"))
}

// A socket runs at most WS_MAX_SUBSCRIPTIONS operations at once: one more
// is answered with an error message for its id (RATE_LIMITED), the socket
// stays open and its subscriptions still get events, and ending one makes
// room for another.
func TestWebSocketSubscriptionsPerSocket(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		for _, proto := range wsProtocols {
			m := e.Merchant("Many Subs " + proto)
			acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
			c, ack, code, _ := initWS(t, e, proto, m.TestSecret, nil)
			if !ack {
				t.Fatalf("%s: closed with %d", proto, code)
			}
			start, stop := "subscribe", "complete"
			if proto == "graphql-ws" {
				start, stop = "start", "stop"
			}
			send := func(id, typ string) {
				t.Helper()
				m := map[string]any{"id": id, "type": typ}
				if typ == start {
					m["payload"] = map[string]any{"query": `subscription { events { id event } }`}
				}
				if err := c.WriteJSON(m); err != nil {
					t.Fatal(err)
				}
			}
			// events reads until each of ids got one event; an error or
			// a close fails the test.
			events := func(ids ...string) {
				t.Helper()
				want := map[string]bool{}
				for _, id := range ids {
					want[id] = true
				}
				for len(want) > 0 {
					msg, err := readWSMsg(c)
					if err != nil {
						t.Fatalf("%s: waiting for events on %v: %v", proto, want, err)
					}
					switch {
					case (msg.Type == "next" || msg.Type == "data") && want[msg.ID]:
						if strings.Contains(string(msg.Payload), `"errors"`) {
							t.Fatalf("%s: %s: %s", proto, msg.ID, msg.Payload)
						}
						delete(want, msg.ID)
					case msg.Type == "complete" && msg.ID == "1" && proto == "graphql-ws":
						// the legacy protocol answers stop with complete
					default:
						t.Fatalf("%s: unexpected %s %s: %s", proto, msg.ID, msg.Type, msg.Payload)
					}
				}
			}
			for _, id := range []string{"1", "2", "3"} {
				send(id, start)
			}
			servertest.Eventually(t, 10*time.Second, "three subscriptions", func() bool { return e.App.Broker.Subscribers() == 3 })
			send("4", start)
			msg, err := readWSMsg(c)
			if err != nil || msg.Type != "error" || msg.ID != "4" {
				t.Fatalf("%s: fourth subscription: %s %s %s, %v; want error for 4", proto, msg.ID, msg.Type, msg.Payload, err)
			}
			var errs []struct {
				Message    string         `json:"message"`
				Extensions map[string]any `json:"extensions"`
			}
			if err := json.Unmarshal(msg.Payload, &errs); err != nil || len(errs) != 1 || errs[0].Extensions["code"] != "RATE_LIMITED" || errs[0].Message == "" {
				t.Errorf("%s: error payload %s", proto, msg.Payload)
			}
			// The socket and its three subscriptions still work.
			depositTo(t, e, m.TestSecret, acc, "10")
			events("1", "2", "3")
			// Ending one makes room for another.
			send("1", stop)
			servertest.Eventually(t, 10*time.Second, "the first subscription to end", func() bool { return e.App.Broker.Subscribers() == 2 })
			send("5", start)
			servertest.Eventually(t, 10*time.Second, "the fifth subscription", func() bool { return e.App.Broker.Subscribers() == 3 })
			depositTo(t, e, m.TestSecret, acc, "20")
			events("2", "3", "5")
			c.Close()
			servertest.Eventually(t, 10*time.Second, "the socket's subscriptions to end", func() bool { return e.App.Broker.Subscribers() == 0 })
		}
	}, servertest.With("WS_MAX_SUBSCRIPTIONS", "3"))
}

// A key holds at most WS_MAX_SOCKETS_PER_KEY sockets open: one more is
// refused whichever way it authenticates (429 before the upgrade with the
// key in its headers, close 4429 at connection_init), other keys are not
// affected, and closing a socket frees its place.
func TestWebSocketSocketsPerKey(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		for _, proto := range wsProtocols {
			m := e.Merchant("Many Sockets " + proto)
			hash := e.Principal(m.TestSecret).KeyHash
			first, ack, code, _ := initWS(t, e, proto, m.TestSecret, nil)
			if !ack {
				t.Fatalf("%s: first socket closed with %d", proto, code)
			}
			second, ack, code, _ := initWS(t, e, proto, m.TestSecret, http.Header{"X-API-KEY": {m.TestSecret}})
			if !ack {
				t.Fatalf("%s: second socket closed with %d", proto, code)
			}
			refusedBoth := func(when string) {
				t.Helper()
				_, ack, code, connErr := initWS(t, e, proto, m.TestSecret, nil)
				if ack || code != 4429 {
					t.Errorf("%s %s: connection_init acknowledged %v, closed with %d; want close 4429", proto, when, ack, code)
				}
				if proto == "graphql-ws" && !connErr {
					t.Errorf("%s %s: no connection_error before the close", proto, when)
				}
				if status, body := upgradeStatus(t, e, proto, m.TestSecret); status != 429 || !strings.Contains(body, `"RATE_LIMITED"`) {
					t.Errorf("%s %s: upgrade with the key in its headers: %d %s; want 429 RATE_LIMITED", proto, when, status, body)
				}
			}
			refusedBoth("third socket")
			// Another merchant's key is not affected.
			other := e.Merchant("Other " + proto)
			if _, ack, code, _ := initWS(t, e, proto, other.TestSecret, nil); !ack {
				t.Errorf("%s: another key's socket closed with %d", proto, code)
			}
			// Closing a socket (either kind) frees its place for either kind.
			for i, c := range []*websocket.Conn{first, second} {
				c.Close()
				servertest.Eventually(t, 10*time.Second, "the server to see the socket closed", func() bool { return e.App.WebSockets.Sockets(hash) == 1 })
				var hdr http.Header
				if i == 0 {
					hdr = http.Header{"X-API-KEY": {m.TestSecret}}
				}
				if _, ack, code, _ := initWS(t, e, proto, m.TestSecret, hdr); !ack {
					t.Fatalf("%s: after closing socket %d: closed with %d", proto, i+1, code)
				}
				refusedBoth("after the place was taken again")
			}
			if n := e.App.WebSockets.Sockets(hash); n != 2 {
				t.Errorf("%s: %d sockets counted, want 2", proto, n)
			}
		}
	}, servertest.With("WS_MAX_SOCKETS_PER_KEY", "2"))
}

// The caps default to 100 operations per socket and 500 sockets per key; 0
// lifts them, and a value that is not a whole number is refused by name.
func TestWebSocketLimitsConfig(t *testing.T) {
	load := func(vars map[string]string) (server.Config, error) {
		return server.LoadConfig(func(k string) string { return vars[k] })
	}
	c, err := load(nil)
	if err != nil || c.WSMaxSubscriptions != 100 || c.WSMaxSocketsPerKey != 500 {
		t.Errorf("defaults: %d, %d, %v", c.WSMaxSubscriptions, c.WSMaxSocketsPerKey, err)
	}
	c, err = load(map[string]string{"WS_MAX_SUBSCRIPTIONS": "0", "WS_MAX_SOCKETS_PER_KEY": "0"})
	if err != nil || c.WSMaxSubscriptions != 0 || c.WSMaxSocketsPerKey != 0 {
		t.Errorf("0: %d, %d, %v", c.WSMaxSubscriptions, c.WSMaxSocketsPerKey, err)
	}
	_, err = load(map[string]string{"WS_MAX_SUBSCRIPTIONS": "-1", "WS_MAX_SOCKETS_PER_KEY": "lots"})
	if err == nil || !strings.Contains(err.Error(), "WS_MAX_SUBSCRIPTIONS") || !strings.Contains(err.Error(), "WS_MAX_SOCKETS_PER_KEY") {
		t.Errorf("bad values: %v", err)
	}
}
