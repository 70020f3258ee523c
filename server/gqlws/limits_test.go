package gqlws

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

type keyCtx struct{}

// newKeyedEnv is newEnv whose connections count under a key: the upgrade
// request's Key header, else connection_init's payload "key" once Init
// accepts it ("good" or "good2").
func newKeyedEnv(t *testing.T, mod func(*Server)) (*env, string) {
	e := newEnv(t, func(s *Server) {
		s.Init = func(ctx context.Context, p map[string]any) (context.Context, error) {
			if ctx.Value(keyCtx{}) != nil {
				return ctx, nil
			}
			switch k, _ := p["key"].(string); k {
			case "good", "good2":
				return context.WithValue(ctx, keyCtx{}, k), nil
			}
			return ctx, errors.New("Forbidden: bad key")
		}
		s.SocketKey = func(ctx context.Context) string {
			k, _ := ctx.Value(keyCtx{}).(string)
			return k
		}
		if mod != nil {
			mod(s)
		}
	})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k := r.Header.Get("Key"); k != "" {
			r = r.WithContext(context.WithValue(r.Context(), keyCtx{}, k))
		}
		e.srv.Do(w, r, e.exec)
	}))
	t.Cleanup(hs.Close)
	return e, "ws" + strings.TrimPrefix(hs.URL, "http")
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// The count per key goes up once per open connection whichever way it
// authenticated, refuses one more, and goes down on every way a
// connection ends: closed by the client, refused at connection_init,
// upgrade refused, shutdown.
func TestSocketsPerKeyCount(t *testing.T) {
	e, headerURL := newKeyedEnv(t, func(s *Server) {
		s.MaxSocketsPerKey = 2
		s.CheckOrigin = func(r *http.Request) bool { return r.Header.Get("Origin") != "http://evil.example" }
	})
	dialHeader := func(key, origin string) (*websocket.Conn, *http.Response, error) {
		h := http.Header{"Key": {key}}
		if origin != "" {
			h.Set("Origin", origin)
		}
		d := websocket.Dialer{Subprotocols: []string{TransportWS}}
		c, res, err := d.Dial(headerURL, h)
		if err == nil {
			t.Cleanup(func() { c.Close() })
		}
		return c, res, err
	}
	a := e.dial(TransportWS)
	a.init()
	hc, _, err := dialHeader("good", "")
	if err != nil {
		t.Fatal(err)
	}
	// Counted at the upgrade, and not again at connection_init.
	h := &client{t: t, c: hc}
	h.send("connection_init", "", nil)
	h.expect("connection_ack", "")
	if n := e.srv.Sockets("good"); n != 2 {
		t.Fatalf("%d counted, want 2", n)
	}
	// One more: refused before the upgrade, or closed at connection_init
	// (after a connection_error in the legacy protocol).
	if _, res, err := dialHeader("good", ""); err == nil || res == nil || res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third by header: %v %v", err, res)
	}
	c := e.dial(TransportWS)
	c.init2("good")
	c.expectClose(CodeTooManyRequests)
	l := e.dial(LegacyWS)
	l.init2("good")
	l.expect("connection_error", "")
	l.expectClose(CodeTooManyRequests)
	// Another key is not affected; an upgrade refused for its origin is
	// not counted.
	o := e.dial(TransportWS)
	o.init2("good2")
	o.expect("connection_ack", "")
	if _, _, err := dialHeader("good2", "http://evil.example"); err == nil {
		t.Fatal("origin not checked")
	}
	if n := e.srv.Sockets("good"); n != 2 {
		t.Fatalf("%d counted after the refusals, want 2", n)
	}
	if n := e.srv.Sockets("good2"); n != 1 {
		t.Fatalf("other key: %d counted, want 1", n)
	}
	// Closing one frees its place.
	a.c.Close()
	eventually(t, "the closed connection uncounted", func() bool { return e.srv.Sockets("good") == 1 })
	c = e.dial(TransportWS)
	c.init2("good")
	c.expect("connection_ack", "")
	// Shutdown uncounts every connection.
	e.srv.Shutdown()
	eventually(t, "shutdown to uncount", func() bool { return e.srv.Sockets("good")+e.srv.Sockets("good2") == 0 })
	e.srv.mu.Lock()
	left := len(e.srv.perKey)
	e.srv.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d keys left in the count", left)
	}
}

// init2 sends connection_init with key, its answer left to the caller.
func (c *client) init2(key string) {
	c.t.Helper()
	c.send("connection_init", "", map[string]string{"key": key})
}

// One operation over MaxSubscriptions gets an error message for its id and
// the connection stays open; its running operations go on, ending one
// makes room, and an id already running still closes the connection as
// the protocol says.
func TestMaxSubscriptions(t *testing.T) {
	for _, proto := range []string{TransportWS, LegacyWS} {
		t.Run(proto, func(t *testing.T) {
			e := newEnv(t, func(s *Server) { s.MaxSubscriptions = 2; s.KeepAlive = time.Minute })
			start, stop := "subscribe", "complete"
			if proto == LegacyWS {
				start, stop = "start", "stop"
			}
			c := e.dial(proto)
			c.init()
			if proto == LegacyWS {
				c.expect("ka", "")
			}
			c.send(start, "a", map[string]any{"query": "stream"})
			sa := <-e.exec.added
			c.send(start, "b", map[string]any{"query": "stream"})
			sb := <-e.exec.added
			c.send(start, "c", map[string]any{"query": "stream"})
			if m := c.expect("error", "c"); !strings.Contains(string(m.Payload), `"code":"RATE_LIMITED"`) {
				t.Fatalf("error payload %s", m.Payload)
			}
			sa.push("1")
			if m := c.expect(map[bool]string{true: "data", false: "next"}[proto == LegacyWS], "a"); string(m.Payload) != `{"data":{"v":"1"}}` {
				t.Fatalf("payload %s", m.Payload)
			}
			// Ending one (the server's stream, or the client's stop) frees a place.
			sb.close()
			c.expect("complete", "b")
			c.send(start, "c", map[string]any{"query": "stream"})
			<-e.exec.added
			c.send(start, "d", map[string]any{"query": "stream"})
			c.expect("error", "d")
			c.send(stop, "a", nil)
			if proto == LegacyWS {
				c.expect("complete", "a")
			}
			c.send(start, "d", map[string]any{"query": "stream"})
			select {
			case <-e.exec.added:
			case <-time.After(5 * time.Second):
				t.Fatal("no room made by stop")
			}
			// An id already running, at capacity: the protocol's answer
			// to a duplicate, not the cap's.
			c.send(start, "d", map[string]any{"query": "stream"})
			if proto == TransportWS {
				c.expectClose(CodeSubscriberExists)
			} else if m := c.expect("error", "d"); strings.Contains(string(m.Payload), "RATE_LIMITED") {
				t.Fatalf("duplicate answered as over the cap: %s", m.Payload)
			}
		})
	}
}
