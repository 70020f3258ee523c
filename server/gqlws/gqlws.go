// Package gqlws serves GraphQL over WebSocket, in both subprotocols:
// graphql-transport-ws (github.com/enisdenjo/graphql-ws, PROTOCOL.md) and
// the legacy graphql-ws of subscriptions-transport-ws.
//
// It replaces gqlgen's own WebSocket transport to make idle subscribers
// cheap, so that one instance holds tens of thousands of them:
//
//   - The HTTP handler returns once the connection is upgraded, so the HTTP
//     server's goroutine and its buffers are gone; each connection keeps one
//     goroutine, the one reading its messages, on a small read buffer, and
//     takes a write buffer from a pool only while writing.
//   - An operation whose stream supports package ready (the event broker)
//     has no goroutine while idle: the broker calls back when an event is
//     queued, and a short-lived goroutine per connection writes what is
//     waiting. Other operations (queries, mutations, a subscription that
//     failed) run on a goroutine of their own until they end.
//   - Keep-alives are timers, not goroutines.
package gqlws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/internal/obs"
	"merchantpay/internal/ready"
)

// The two subprotocols.
const (
	TransportWS = "graphql-transport-ws"
	LegacyWS    = "graphql-ws"
)

// Close codes of graphql-transport-ws.
const (
	CodeBadRequest       = 4400
	CodeUnauthorized     = 4401
	CodeForbidden        = 4403
	CodeInitTimeout      = 4408
	CodeSubscriberExists = 4409
	CodeTooManyInits     = 4429
)

// Defaults of Server.
const (
	DefaultInitTimeout  = 10 * time.Second
	DefaultKeepAlive    = 15 * time.Second
	DefaultWriteTimeout = 10 * time.Second
	DefaultReadLimit    = 1 << 20
	// readBuffer is each connection's read buffer: clients send little
	// (connection_init, subscribe, complete, pong), and a larger message is
	// read through it in pieces.
	readBuffer = 1024
)

// CloseError is what Init returns to close the connection with a given
// code and reason; any other error closes it with 4403 and the error's
// text.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string { return e.Reason }

// Server is a gqlgen transport (handler.Server.AddTransport) for WebSocket
// upgrade requests.
type Server struct {
	// CheckOrigin decides whether a browser's Origin may connect (nil:
	// gorilla's same-origin check).
	CheckOrigin func(r *http.Request) bool
	// Init runs on connection_init with its payload and returns the context
	// every operation of the connection runs in.
	Init func(ctx context.Context, payload map[string]any) (context.Context, error)
	// Authorize, when set, runs before every operation with the
	// connection's context: an error closes the connection (a CloseError
	// with its code, any other with 4401), as a credential that no longer
	// holds (a rolled API key) must.
	Authorize func(ctx context.Context) error
	// InitTimeout bounds the wait for connection_init.
	InitTimeout time.Duration
	// KeepAlive is the interval of graphql-ws "ka" messages (the legacy
	// protocol's liveness signal; graphql-transport-ws clients ping
	// themselves if they want to).
	KeepAlive time.Duration
	// WriteTimeout bounds one message's write: a client that reads no more
	// is disconnected.
	WriteTimeout time.Duration
	// ReadLimit bounds one message from the client.
	ReadLimit int64
	// Mutation, when set, takes an operation from the executor: given its
	// context and payload ({query, variables, operationName}) it says
	// whether it takes it and returns how to run it. run's answer, a
	// GraphQL response as JSON, is the operation's one result. The service
	// runs mutations this way, as it runs those of POST /graphql: in one
	// database transaction, with idempotency.
	Mutation func(ctx context.Context, payload json.RawMessage) (run func() json.RawMessage, ok bool)
	// MaxSubscriptions bounds the operations one connection runs at once:
	// its subscriptions, and a query or mutation while it runs. One more
	// is answered with an error message for its id, and the connection
	// stays open; ending one frees its place. 0: no bound.
	MaxSubscriptions int
	// MaxSocketsPerKey bounds the connections open at once under one key
	// (SocketKey): one more is refused, with Refuse before the upgrade
	// when its upgrade request authenticated, else with a close
	// (CodeTooManyRequests) on connection_init. Closing one frees its
	// place. 0: no bound.
	MaxSocketsPerKey int
	// SocketKey names the key a connection counts under, from the upgrade
	// request's context and then from the one Init returns; "" (or a nil
	// SocketKey) counts it under none.
	SocketKey func(ctx context.Context) string
	// Refuse answers an upgrade request refused before the upgrade (nil: a
	// plain-text HTTP error of the error kind's status).
	Refuse func(w http.ResponseWriter, r *http.Request, err error)

	once     sync.Once
	upgrader websocket.Upgrader

	mu       sync.Mutex
	conns    map[*conn]struct{}
	perKey   map[string]int // open connections by SocketKey
	shutdown bool
}

var writeBuffers sync.Pool

func (s *Server) setup() {
	s.once.Do(func() {
		if s.InitTimeout <= 0 {
			s.InitTimeout = DefaultInitTimeout
		}
		if s.KeepAlive <= 0 {
			s.KeepAlive = DefaultKeepAlive
		}
		if s.WriteTimeout <= 0 {
			s.WriteTimeout = DefaultWriteTimeout
		}
		if s.ReadLimit <= 0 {
			s.ReadLimit = DefaultReadLimit
		}
		s.upgrader = websocket.Upgrader{
			Subprotocols:    []string{TransportWS, LegacyWS},
			CheckOrigin:     s.CheckOrigin,
			ReadBufferSize:  readBuffer,
			WriteBufferPool: &writeBuffers,
		}
		s.conns = map[*conn]struct{}{}
		s.perKey = map[string]int{}
	})
}

// Supports reports whether r asks for a WebSocket.
func (s *Server) Supports(r *http.Request) bool { return websocket.IsWebSocketUpgrade(r) }

// Do upgrades r and returns; the connection lives on in its own goroutine.
func (s *Server) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	s.setup()
	// Authenticated by its headers: counted under its key now, so that one
	// too many is refused before the upgrade.
	key := s.keyOf(r.Context())
	if !s.claim(key) {
		s.refuse(w, r, s.tooManySockets())
		return
	}
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.release(key)
		// gorilla has answered the request with an HTTP error.
		obs.Log(r.Context()).Info("websocket upgrade refused", "err", err)
		return
	}
	ws.SetReadLimit(s.ReadLimit)
	// The request's context ends when this handler returns; the
	// connection's keeps its values (the logger, a principal from the
	// upgrade headers) and ends when the connection does.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	c := &conn{s: s, ws: ws, exec: exec, cancel: cancel, legacy: ws.Subprotocol() != TransportWS,
		ops: map[string]*op{}, key: key}
	c.ctx = context.WithValue(ctx, connKey{}, c) // for Close
	if !s.add(c) {
		c.close(websocket.CloseGoingAway, "the service is shutting down")
		return
	}
	go c.run()
}

func (s *Server) add(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

// remove forgets c, which was counted under key.
func (s *Server) remove(c *conn, key string) {
	s.mu.Lock()
	delete(s.conns, c)
	s.releaseLocked(key)
	s.mu.Unlock()
}

// Connections is the number of open connections.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Shutdown closes every connection with 1001 (going away) and refuses new
// ones; clients reconnect to another instance.
func (s *Server) Shutdown() {
	s.setup()
	s.mu.Lock()
	s.shutdown = true
	all := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		all = append(all, c)
	}
	s.mu.Unlock()
	for _, c := range all {
		c.close(websocket.CloseGoingAway, "the service is shutting down")
	}
}

type connKey struct{}

// Close closes the connection whose context (or an operation's) ctx is,
// with code and reason, and reports whether there was one.
func Close(ctx context.Context, code int, reason string) bool {
	c, ok := ctx.Value(connKey{}).(*conn)
	if ok {
		c.close(code, reason)
	}
	return ok
}

// message is one protocol message, both ways.
type message struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// conn is one WebSocket connection.
type conn struct {
	s      *Server
	ws     *websocket.Conn
	exec   graphql.GraphExecutor
	legacy bool
	// ctx is the connection's; after connection_init it carries what Init
	// returned.
	ctx    context.Context
	cancel context.CancelFunc

	// wmu serialises writes (gorilla allows one writer at a time).
	wmu sync.Mutex

	mu       sync.Mutex
	acked    bool
	closed   bool
	ops      map[string]*op
	runq     []*op
	draining bool
	ka       *time.Timer
	// key is what the connection counts under for MaxSocketsPerKey, once
	// counted.
	key string
}

// op is one operation (subscribe / start).
type op struct {
	id     string
	ctx    context.Context
	cancel context.CancelFunc
	// Fields below are guarded by conn.mu.
	// responses, once set, is driven by notify: one call per notification.
	responses graphql.ResponseHandler
	pending   int  // notifications not yet consumed
	queued    bool // in conn.runq
	done      bool
	// stopped: the client ended it; graphql-transport-ws then expects no
	// complete from the server.
	stopped bool
}

func (c *conn) log() *slog.Logger { return obs.Log(c.ctx) }

// run reads the client's messages until the connection ends.
func (c *conn) run() {
	code, reason := websocket.CloseNormalClosure, ""
	defer func() { c.close(code, reason) }()
	_ = c.ws.SetReadDeadline(time.Now().Add(c.s.InitTimeout))
	for {
		m, err := c.read()
		if err != nil {
			var ne interface{ Timeout() bool }
			switch {
			case errors.As(err, &ne) && ne.Timeout() && !c.isAcked():
				code, reason = CodeInitTimeout, "Connection initialisation timeout"
			case errors.Is(err, errBadMessage):
				code, reason = CodeBadRequest, "Invalid message received"
				if c.legacy {
					c.write(message{Type: "connection_error", Payload: errorPayload(err.Error())})
				}
			default:
				code = -1 // the connection is gone: nothing to send
			}
			return
		}
		if code, reason = c.handle(m); code != 0 {
			return
		}
	}
}

var errBadMessage = errors.New("invalid message")

// read reads one message.
func (c *conn) read() (message, error) {
	var m message
	_, r, err := c.ws.NextReader()
	if err != nil {
		return m, err
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r); err != nil {
		return m, err
	}
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m.Type == "" {
		return m, fmt.Errorf("%w: not a JSON message with a type", errBadMessage)
	}
	return m, nil
}

func (c *conn) isAcked() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.acked
}

// subscribePayload reports whether p is what graphql-transport-ws's
// subscribe message must carry: an object whose query is a string and whose
// operationName, variables and extensions, when present and not null, are a
// string and objects.
func subscribePayload(p json.RawMessage) bool {
	var v struct {
		Query         *string         `json:"query"`
		OperationName json.RawMessage `json:"operationName"`
		Variables     json.RawMessage `json:"variables"`
		Extensions    json.RawMessage `json:"extensions"`
	}
	p = bytes.TrimSpace(p)
	if len(p) == 0 || p[0] != '{' || json.Unmarshal(p, &v) != nil || v.Query == nil {
		return false
	}
	is := func(raw json.RawMessage, first byte) bool {
		raw = bytes.TrimSpace(raw)
		return len(raw) == 0 || string(raw) == "null" || raw[0] == first
	}
	return is(v.OperationName, '"') && is(v.Variables, '{') && is(v.Extensions, '{')
}

// handle acts on one message; a non-zero code closes the connection.
func (c *conn) handle(m message) (int, string) {
	switch {
	case m.Type == "connection_init":
		return c.init(m.Payload)
	case m.Type == "subscribe" && !c.legacy, m.Type == "start" && c.legacy:
		if !c.isAcked() {
			return CodeUnauthorized, "Unauthorized"
		}
		if m.ID == "" {
			return CodeBadRequest, "Invalid message received: no id"
		}
		if !c.legacy && !subscribePayload(m.Payload) {
			// graphql-transport-ws: a message of a format the protocol does
			// not specify closes the socket (the legacy protocol answers
			// an error for the operation instead, below).
			return CodeBadRequest, "Invalid message received: subscribe needs a payload object with a query string"
		}
		// Refused before the key's check, which costs a database query:
		// only this goroutine starts operations, so the count cannot rise
		// before subscribe registers this one.
		if c.atCapacity(m.ID) {
			c.write(message{ID: m.ID, Type: "error", Payload: c.tooManyOperations()})
			return 0, ""
		}
		if c.s.Authorize != nil {
			c.mu.Lock()
			ctx := c.ctx
			c.mu.Unlock()
			if err := c.s.Authorize(ctx); err != nil {
				ce := &CloseError{Code: CodeUnauthorized, Reason: err.Error()}
				errors.As(err, &ce)
				if c.legacy {
					c.write(message{Type: "connection_error", Payload: errorPayload(ce.Reason)})
				}
				return ce.Code, ce.Reason
			}
		}
		return c.subscribe(m)
	case m.Type == "complete" && !c.legacy, m.Type == "stop" && c.legacy:
		c.stop(m.ID)
	case m.Type == "ping" && !c.legacy:
		c.write(message{Type: "pong", Payload: m.Payload})
	case m.Type == "pong" && !c.legacy:
	case m.Type == "connection_terminate" && c.legacy:
		return websocket.CloseNormalClosure, "terminated"
	default:
		if c.legacy {
			c.write(message{Type: "connection_error", Payload: errorPayload("unexpected message " + m.Type)})
		}
		return CodeBadRequest, "Invalid message received: unexpected " + m.Type
	}
	return 0, ""
}

// init answers connection_init.
func (c *conn) init(payload json.RawMessage) (int, string) {
	if c.isAcked() {
		return CodeTooManyInits, "Too many initialisation requests"
	}
	var p map[string]any
	if len(payload) > 0 && string(payload) != "null" {
		if err := json.Unmarshal(payload, &p); err != nil {
			return CodeBadRequest, "Invalid message received: connection_init payload is not an object"
		}
	}
	ctx := c.ctx
	var err error
	if c.s.Init != nil {
		ctx, err = c.s.Init(c.ctx, p)
	}
	if err == nil {
		err = c.admit(ctx)
	}
	if err != nil {
		ce := &CloseError{Code: CodeForbidden, Reason: err.Error()}
		errors.As(err, &ce)
		if c.legacy {
			c.write(message{Type: "connection_error", Payload: errorPayload(ce.Reason)})
		}
		return ce.Code, ce.Reason
	}
	_ = c.ws.SetReadDeadline(time.Time{})
	c.mu.Lock()
	c.ctx, c.acked = ctx, true
	c.mu.Unlock()
	c.write(message{Type: "connection_ack"})
	if c.legacy {
		c.keepAlive()
	}
	return 0, ""
}

// keepAlive sends "ka" now and every KeepAlive after.
func (c *conn) keepAlive() {
	if !c.write(message{Type: "ka"}) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.ka = time.AfterFunc(c.s.KeepAlive, c.keepAlive)
	}
}

// subscribe starts an operation.
func (c *conn) subscribe(m message) (int, string) {
	start := graphql.Now()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, ""
	}
	if _, dup := c.ops[m.ID]; dup {
		c.mu.Unlock()
		if !c.legacy {
			return CodeSubscriberExists, "Subscriber for " + m.ID + " already exists"
		}
		c.write(message{ID: m.ID, Type: "error", Payload: errorsPayload(&gqlerror.Error{Message: "an operation with id " + m.ID + " is running"})})
		return 0, ""
	}
	ctx, cancel := context.WithCancel(c.ctx)
	o := &op{id: m.ID, cancel: cancel}
	c.ops[m.ID] = o
	c.mu.Unlock()

	if c.s.Mutation != nil {
		if run, ok := c.s.Mutation(ctx, m.Payload); ok {
			o.ctx = ctx
			go func() {
				var resp json.RawMessage
				if c.guard(o, func() { resp = run() }) != nil {
					return
				}
				c.write(message{ID: o.id, Type: c.nextType(), Payload: resp})
				c.finish(o)
			}()
			return 0, ""
		}
	}

	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(m.Payload))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		c.failed(o, errorsPayload(&gqlerror.Error{Message: "invalid json"}))
		return 0, ""
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	ctx = graphql.StartOperationTrace(ctx)
	rc, err := c.exec.CreateOperationContext(ctx, params)
	if err != nil {
		// The kind is read before DispatchError: its error presenter may
		// rewrite the errors' codes (the service's own replace gqlgen's).
		kind := errcode.GetErrorKind(err)
		resp := c.exec.DispatchError(graphql.WithOperationContext(ctx, rc), err)
		if kind == errcode.KindProtocol {
			// A document that does not parse or validate: an error
			// message for the operation, which never ran.
			c.failed(o, errorsPayload(resp.Errors...))
		} else {
			c.next(o, &graphql.Response{Errors: err})
			c.finish(o)
		}
		return 0, ""
	}
	ctx, hook := ready.With(graphql.WithOperationContext(ctx, rc), func() { c.notify(o) })
	var responses graphql.ResponseHandler
	if err := c.guard(o, func() { responses, ctx = c.exec.DispatchOperation(ctx, rc) }); err != nil {
		return 0, ""
	}
	o.ctx = ctx
	if !hook.Taken() {
		// Not a stream that tells when it has something: read it from a
		// goroutine of its own until it ends.
		go c.drive(o, responses)
		return 0, ""
	}
	c.mu.Lock()
	o.responses = responses
	c.scheduleLocked(o)
	c.mu.Unlock()
	return 0, ""
}

// guard runs fn, turning a panic into an error message for o.
func (c *conn) guard(o *op, fn func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			c.log().Error("panic in a GraphQL WebSocket operation", "panic", p, "operation", o.id)
			err = fmt.Errorf("internal error")
			c.failed(o, errorsPayload(&gqlerror.Error{Message: "internal error"}))
		}
	}()
	fn()
	return nil
}

// drive sends every response of o until it ends.
func (c *conn) drive(o *op, responses graphql.ResponseHandler) {
	for {
		var resp *graphql.Response
		if c.guard(o, func() { resp = responses(o.ctx) }) != nil {
			return
		}
		if resp == nil {
			c.finish(o)
			return
		}
		c.next(o, resp)
	}
}

// notify is o's ready callback: its stream holds one more item or ended.
// It runs under the broker's lock, so it only queues.
func (c *conn) notify(o *op) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o.done {
		return
	}
	o.pending++
	c.scheduleLocked(o)
}

func (c *conn) scheduleLocked(o *op) {
	if o.responses == nil || o.pending == 0 || o.queued || o.done || c.closed {
		return
	}
	o.queued = true
	c.runq = append(c.runq, o)
	if !c.draining {
		c.draining = true
		go c.drain()
	}
}

// drain writes what the queued operations' streams hold, then ends.
func (c *conn) drain() {
	for {
		c.mu.Lock()
		if len(c.runq) == 0 || c.closed {
			c.runq, c.draining = nil, false
			c.mu.Unlock()
			return
		}
		o := c.runq[0]
		c.runq = c.runq[1:]
		n := o.pending
		o.pending, o.queued = 0, false
		c.mu.Unlock()
		for ; n > 0; n-- {
			// One receive per notification: it does not wait.
			var resp *graphql.Response
			if c.guard(o, func() { resp = o.responses(o.ctx) }) != nil {
				break
			}
			if resp == nil {
				c.finish(o)
				break
			}
			c.next(o, resp)
		}
	}
}

// stop ends o at the client's request.
func (c *conn) stop(id string) {
	c.mu.Lock()
	o := c.ops[id]
	if o != nil {
		o.stopped = true
		delete(c.ops, id)
	}
	c.mu.Unlock()
	if o != nil {
		// Its stream closes, and finish runs from drain or drive.
		o.cancel()
	}
}

// end marks o done once; it reports whether this call did.
func (c *conn) end(o *op) (first, stopped bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o.done {
		return false, o.stopped
	}
	o.done = true
	if c.ops[o.id] == o {
		delete(c.ops, o.id)
	}
	return true, o.stopped
}

// finish ends o normally: complete, unless the client ended it (the legacy
// protocol answers stop with complete).
func (c *conn) finish(o *op) {
	first, stopped := c.end(o)
	if !first {
		return
	}
	o.cancel()
	if !stopped || c.legacy {
		c.write(message{ID: o.id, Type: "complete"})
	}
}

// failed ends o with an error message (no complete follows in
// graphql-transport-ws; the legacy protocol completes it).
func (c *conn) failed(o *op, payload json.RawMessage) {
	first, _ := c.end(o)
	if !first {
		return
	}
	o.cancel()
	c.write(message{ID: o.id, Type: "error", Payload: payload})
	if c.legacy {
		c.write(message{ID: o.id, Type: "complete"})
	}
}

func (c *conn) next(o *op, resp *graphql.Response) {
	b, err := json.Marshal(resp)
	if err != nil {
		c.log().Error("cannot encode a GraphQL response", "err", err, "operation", o.id)
		return
	}
	c.write(message{ID: o.id, Type: c.nextType(), Payload: b})
}

// nextType is the type of a result message in c's protocol.
func (c *conn) nextType() string {
	if c.legacy {
		return "data"
	}
	return "next"
}

// write sends m; a failed write closes the connection (its reader then
// ends and cleans up).
func (c *conn) write(m message) bool {
	c.wmu.Lock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.s.WriteTimeout))
	err := c.ws.WriteMessage(websocket.TextMessage, m.encode())
	c.wmu.Unlock()
	if err != nil {
		_ = c.ws.Close()
		return false
	}
	return true
}

// encode is m as JSON, the payload copied as it is: every payload is JSON
// already (encoded here, or a client's, parsed on the way in), and
// encoding/json would scan it again for every subscriber of an event.
func (m message) encode() []byte {
	b := make([]byte, 0, len(m.ID)+len(m.Type)+len(m.Payload)+40)
	b = append(b, '{')
	if m.ID != "" {
		id, _ := json.Marshal(m.ID)
		b = append(append(append(b, `"id":`...), id...), ',')
	}
	typ, _ := json.Marshal(m.Type)
	b = append(append(b, `"type":`...), typ...)
	if len(m.Payload) > 0 {
		b = append(append(b, `,"payload":`...), m.Payload...)
	}
	return append(b, '}')
}

// close ends the connection once: a close frame with code and reason
// (none when code < 0), every operation cancelled.
func (c *conn) close(code int, reason string) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	if c.ka != nil {
		c.ka.Stop()
	}
	c.runq = nil
	key := c.key
	c.mu.Unlock()
	if code >= 0 {
		c.wmu.Lock()
		_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
		c.wmu.Unlock()
	}
	_ = c.ws.Close()
	c.cancel()
	c.s.remove(c, key)
}

func errorPayload(msg string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"message": msg})
	return b
}

func errorsPayload(errs ...*gqlerror.Error) json.RawMessage {
	b, _ := json.Marshal(errs)
	return b
}
