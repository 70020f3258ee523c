package server_test

import (
	"errors"
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
