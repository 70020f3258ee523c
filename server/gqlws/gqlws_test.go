package gqlws

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/internal/ready"
)

// stream is a producer like the event broker: a buffered channel, a ready
// callback per item and at the close.
type stream struct {
	mu     sync.Mutex
	ch     chan string
	notify func()
	closed bool
	ctx    context.Context
}

func (s *stream) push(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.ch <- v
	if s.notify != nil {
		s.notify()
	}
}

func (s *stream) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	close(s.ch)
	if s.notify != nil {
		s.notify()
	}
}

// fakeExec answers three queries: "stream" (a subscription on a stream),
// "once" (one response, like a query), "blocking" (a stream without ready
// support); anything else fails validation.
type fakeExec struct {
	mu      sync.Mutex
	streams []*stream
	added   chan *stream
}

func newFakeExec() *fakeExec { return &fakeExec{added: make(chan *stream, 1000)} }

func (f *fakeExec) CreateOperationContext(ctx context.Context, p *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	switch p.Query {
	case "stream", "once", "blocking":
		return &graphql.OperationContext{RawQuery: p.Query, Variables: p.Variables}, nil
	}
	err := &gqlerror.Error{Message: "unknown query " + p.Query}
	errcode.Set(err, errcode.ValidationFailed)
	return nil, gqlerror.List{err}
}

func (f *fakeExec) DispatchOperation(ctx context.Context, rc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	if rc.RawQuery == "once" {
		return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"once":true}`)}), ctx
	}
	s := &stream{ch: make(chan string, 8), ctx: ctx}
	if rc.RawQuery == "stream" {
		s.notify = ready.Take(ctx)
	}
	context.AfterFunc(ctx, s.close)
	f.mu.Lock()
	f.streams = append(f.streams, s)
	f.mu.Unlock()
	f.added <- s
	return func(ctx context.Context) *graphql.Response {
		select {
		case v, ok := <-s.ch:
			if !ok {
				return nil
			}
			b, _ := json.Marshal(map[string]string{"v": v})
			return &graphql.Response{Data: b}
		case <-ctx.Done():
			return nil
		}
	}, ctx
}

func (f *fakeExec) DispatchError(ctx context.Context, list gqlerror.List) *graphql.Response {
	return &graphql.Response{Errors: list}
}

type env struct {
	t    *testing.T
	srv  *Server
	exec *fakeExec
	url  string
}

func newEnv(t *testing.T, mod func(*Server)) *env {
	e := &env{t: t, exec: newFakeExec()}
	e.srv = &Server{
		Init: func(ctx context.Context, p map[string]any) (context.Context, error) {
			switch p["key"] {
			case "good":
				return ctx, nil
			case "teapot":
				return ctx, &CloseError{Code: 4418, Reason: "teapot"}
			}
			return ctx, errors.New("Forbidden: bad key")
		},
	}
	if mod != nil {
		mod(e.srv)
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.srv.Do(w, r, e.exec)
	}))
	t.Cleanup(func() { e.srv.Shutdown(); hs.Close() })
	e.url = "ws" + strings.TrimPrefix(hs.URL, "http")
	return e
}

type client struct {
	t *testing.T
	c *websocket.Conn
}

func (e *env) dial(proto string) *client {
	e.t.Helper()
	d := websocket.Dialer{Subprotocols: []string{proto}}
	c, _, err := d.Dial(e.url, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return &client{t: e.t, c: c}
}

func (c *client) send(typ, id string, payload any) {
	c.t.Helper()
	m := map[string]any{"type": typ}
	if id != "" {
		m["id"] = id
	}
	if payload != nil {
		m["payload"] = payload
	}
	if err := c.c.WriteJSON(m); err != nil {
		c.t.Fatal(err)
	}
}

// read returns the next message, or the close error.
func (c *client) read() (message, error) {
	_ = c.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var m message
	err := c.c.ReadJSON(&m)
	return m, err
}

func (c *client) expect(typ, id string) message {
	c.t.Helper()
	m, err := c.read()
	if err != nil {
		c.t.Fatalf("want %s, got %v", typ, err)
	}
	if m.Type != typ || m.ID != id {
		c.t.Fatalf("want %s %q, got %s %q %s", typ, id, m.Type, m.ID, m.Payload)
	}
	return m
}

func (c *client) expectClose(code int) {
	c.t.Helper()
	for {
		m, err := c.read()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			if ce.Code != code {
				c.t.Fatalf("close %d %q, want %d", ce.Code, ce.Text, code)
			}
			return
		}
		if err != nil {
			c.t.Fatalf("want close %d, got %v", code, err)
		}
		if m.Type == "ka" || m.Type == "connection_error" {
			continue
		}
		c.t.Fatalf("want close %d, got message %s", code, m.Type)
	}
}

// expectSkippingKA is expect for the legacy protocol, whose keep-alives
// may come first.
func (c *client) expectSkippingKA(typ, id string) {
	c.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		m, err := c.read()
		if err != nil {
			c.t.Fatalf("want %s, got %v", typ, err)
		}
		if m.Type == "ka" {
			continue
		}
		if m.Type != typ || m.ID != id {
			c.t.Fatalf("want %s %q, got %s %q", typ, id, m.Type, m.ID)
		}
		return
	}
	c.t.Fatalf("no %s within 5 s", typ)
}

func (c *client) init() {
	c.t.Helper()
	c.send("connection_init", "", map[string]string{"key": "good"})
	c.expect("connection_ack", "")
}

func TestSubscriptionLifecycle(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(TransportWS)
	c.init()
	c.send("subscribe", "a", map[string]any{"query": "stream"})
	s := <-e.exec.added
	s.push("one")
	s.push("two")
	if m := c.expect("next", "a"); string(m.Payload) != `{"data":{"v":"one"}}` {
		t.Fatalf("payload %s", m.Payload)
	}
	c.expect("next", "a")
	// The stream ends: complete.
	s.close()
	c.expect("complete", "a")

	// The client completes an operation: its stream is cancelled and the
	// server sends nothing for it.
	c.send("subscribe", "b", map[string]any{"query": "stream"})
	s = <-e.exec.added
	c.send("complete", "b", nil)
	select {
	case <-s.ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("stream not cancelled")
	}
	// A one-shot operation answers once and completes; the id can be reused.
	c.send("subscribe", "b", map[string]any{"query": "once"})
	c.expect("next", "b")
	c.expect("complete", "b")
	// Validation errors: an error message, no complete.
	c.send("subscribe", "c", map[string]any{"query": "nope"})
	if m := c.expect("error", "c"); !strings.Contains(string(m.Payload), "unknown query nope") {
		t.Fatalf("error payload %s", m.Payload)
	}
	c.send("ping", "", map[string]string{"x": "y"})
	if m := c.expect("pong", ""); string(m.Payload) != `{"x":"y"}` {
		t.Fatalf("pong payload %s", m.Payload)
	}
	// A stream without ready support is read from its own goroutine.
	c.send("subscribe", "d", map[string]any{"query": "blocking"})
	s = <-e.exec.added
	s.push("x")
	c.expect("next", "d")
	s.close()
	c.expect("complete", "d")
}

func TestProtocolErrors(t *testing.T) {
	e := newEnv(t, func(s *Server) { s.InitTimeout = 200 * time.Millisecond })
	c := e.dial(TransportWS)
	c.send("subscribe", "a", map[string]any{"query": "stream"})
	c.expectClose(CodeUnauthorized)

	c = e.dial(TransportWS)
	c.init()
	c.send("connection_init", "", nil)
	c.expectClose(CodeTooManyInits)

	c = e.dial(TransportWS)
	c.init()
	c.send("subscribe", "a", map[string]any{"query": "stream"})
	<-e.exec.added
	c.send("subscribe", "a", map[string]any{"query": "stream"})
	c.expectClose(CodeSubscriberExists)

	c = e.dial(TransportWS)
	c.init()
	_ = c.c.WriteMessage(websocket.TextMessage, []byte("{not json"))
	c.expectClose(CodeBadRequest)

	c = e.dial(TransportWS)
	c.init()
	c.send("subscribe", "", map[string]any{"query": "stream"})
	c.expectClose(CodeBadRequest)

	// A subscribe whose payload is not the protocol's closes with 4400.
	for _, payload := range []any{nil, "stream", []any{}, map[string]any{}, map[string]any{"query": 1},
		map[string]any{"query": "stream", "variables": "x"}, map[string]any{"query": "stream", "operationName": 2}} {
		c = e.dial(TransportWS)
		c.init()
		c.send("subscribe", "a", payload)
		c.expectClose(CodeBadRequest)
	}

	c = e.dial(TransportWS)
	c.expectClose(CodeInitTimeout)

	c = e.dial(TransportWS)
	c.send("connection_init", "", map[string]string{"key": "bad"})
	c.expectClose(CodeForbidden)

	c = e.dial(TransportWS)
	c.send("connection_init", "", map[string]string{"key": "teapot"})
	c.expectClose(4418)
}

func TestLegacyProtocol(t *testing.T) {
	e := newEnv(t, func(s *Server) { s.KeepAlive = 50 * time.Millisecond })
	c := e.dial(LegacyWS)
	c.send("connection_init", "", map[string]string{"key": "good"})
	c.expect("connection_ack", "")
	c.expect("ka", "")
	c.expect("ka", "") // and again after KeepAlive
	c.send("start", "1", map[string]any{"query": "stream"})
	s := <-e.exec.added
	s.push("v")
	c.expectSkippingKA("data", "1")
	// stop is answered with complete in this protocol.
	c.send("stop", "1", nil)
	c.expectSkippingKA("complete", "1")
	c.send("connection_terminate", "", nil)
	c.expectClose(websocket.CloseNormalClosure)

	c = e.dial(LegacyWS)
	c.send("connection_init", "", map[string]string{"key": "bad"})
	for {
		m, err := c.read()
		if err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != CodeForbidden {
				t.Fatalf("want close 4403, got %v", err)
			}
			break
		}
		if m.Type != "connection_error" {
			t.Fatalf("want connection_error, got %s", m.Type)
		}
	}
}

func TestShutdownClosesConnections(t *testing.T) {
	e := newEnv(t, nil)
	c := e.dial(TransportWS)
	c.init()
	e.srv.Shutdown()
	c.expectClose(websocket.CloseGoingAway)
	if n := e.srv.Connections(); n != 0 {
		t.Fatalf("%d connections after shutdown", n)
	}
	// New connections are refused.
	c = e.dial(TransportWS)
	c.expectClose(websocket.CloseGoingAway)
}

// An idle subscriber costs its connection's reading goroutine and nothing
// more; a burst of events reaches every one of them.
func TestIdleSubscribersHoldOneGoroutineEach(t *testing.T) {
	e := newEnv(t, nil)
	const n = 200
	before := runtime.NumGoroutine()
	clients := make([]*client, n)
	for i := range clients {
		clients[i] = e.dial(TransportWS)
		clients[i].init()
		clients[i].send("subscribe", "s", map[string]any{"query": "stream"})
	}
	streams := make([]*stream, n)
	for i := range streams {
		streams[i] = <-e.exec.added
	}
	time.Sleep(100 * time.Millisecond)
	// Each connection: one server goroutine; the test's clients add none
	// (gorilla's client reads on the caller's goroutine).
	if extra := runtime.NumGoroutine() - before; extra > n+10 {
		t.Fatalf("%d goroutines for %d idle subscribers", extra, n)
	}
	for _, s := range streams {
		s.push("hello")
	}
	for _, c := range clients {
		c.expect("next", "s")
	}
}

// presentingExec presents errors as the service's error presenter does:
// it rewrites their codes in place.
type presentingExec struct{ *fakeExec }

func (p presentingExec) DispatchError(ctx context.Context, list gqlerror.List) *graphql.Response {
	for _, err := range list {
		errcode.Set(err, "VALIDATION_ERROR")
	}
	return &graphql.Response{Errors: list}
}

// A document that fails validation is answered with an error message
// even when the error presenter rewrites the errors' codes: in
// graphql-transport-ws no complete follows, in graphql-ws complete does.
func TestValidationErrorWithPresenter(t *testing.T) {
	e := newEnv(t, nil)
	exec := presentingExec{e.exec}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.srv.Do(w, r, exec) }))
	t.Cleanup(hs.Close)
	e.url = "ws" + strings.TrimPrefix(hs.URL, "http")

	c := e.dial(TransportWS)
	c.init()
	c.send("subscribe", "a", map[string]any{"query": "nope"})
	if m := c.expect("error", "a"); !strings.Contains(string(m.Payload), `"code":"VALIDATION_ERROR"`) {
		t.Fatalf("error payload %s", m.Payload)
	}
	c.send("ping", "", nil)
	c.expect("pong", "")

	c = e.dial(LegacyWS)
	c.init()
	c.send("start", "b", map[string]any{"query": "nope"})
	c.expectSkippingKA("error", "b")
	c.expectSkippingKA("complete", "b")
}
