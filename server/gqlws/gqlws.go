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
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"

	"merchantpay/internal/obs"
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
	// GraphQL response as JSON, is the operation's one result; or, when
	// run says the operation was refused before it ran (it did not
	// validate, or its limits refused it), the answer's errors are sent
	// as an error message for it, as a refused query's are. The service
	// runs mutations this way, as it runs those of POST /graphql: in one
	// database transaction, with idempotency.
	Mutation func(ctx context.Context, payload json.RawMessage) (run func() (answer json.RawMessage, refused bool), ok bool)
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
	// gorilla writes the 101 itself, from its own header argument and not
	// w's: the request id the middleware set on w goes along, as on every
	// answer.
	var hdr http.Header
	if id := w.Header().Values("X-Request-Id"); len(id) > 0 {
		hdr = http.Header{"X-Request-Id": id}
	}
	ws, err := s.upgrader.Upgrade(w, r, hdr)
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
