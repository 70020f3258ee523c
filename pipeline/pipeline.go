// Package pipeline is the request pipeline both APIs share: the steps a
// request of REST and of GraphQL (over HTTP, and a WebSocket's mutations)
// passes before and around its operation: authentication, the key kind,
// the rate limit, the body, the tenant and the idempotency store. Each
// step is a small named Middleware; a transport composes its chain of them
// once, with its own decoding step where it needs one, and itself only
// decodes, calls one operation and encodes.
//
// The steps every path of the service takes before any of these (request
// id, metrics labels, trace span, logger, deadlines, access log) are the
// server's outer middleware.
package pipeline

import (
	"context"
	"net/http"

	"merchantpay/internal/idem"
	"merchantpay/internal/merchants"
)

// Authenticator finds the caller of an API key.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (merchants.Principal, error)
	// Seen and Forget: see merchants.Service.
	Seen(key string) (merchants.Principal, bool)
	Forget(keyHash string)
}

// Limiter is the per-key rate limit; Allow takes one token, AllowN n at
// once (a costly GraphQL operation), and each returns the wait before a
// retry.
type Limiter interface {
	Allow(key string) (ok bool, retryAfterSeconds int)
	AllowN(key string, n int) (ok bool, retryAfterSeconds int)
}

// Pipeline holds what the steps call. Limiter may be nil (no rate limit).
type Pipeline struct {
	Auth    Authenticator
	Limiter Limiter
	Idem    *idem.Store
}

// New builds the pipeline.
func New(auth Authenticator, limiter Limiter, store *idem.Store) *Pipeline {
	return &Pipeline{Auth: auth, Limiter: limiter, Idem: store}
}

// Access says which keys may call a route.
type Access int

const (
	// SecretKey routes need a secret key.
	SecretKey Access = iota
	// PublicKey routes also take a public key (safe in a browser).
	PublicKey
)

// Route is what the steps need to know of a route: one row of a
// transport's table of route properties.
type Route struct {
	// Access says which keys may call the route; Forbidden is the
	// refusal of any other key.
	Access    Access
	Forbidden string
	// BodyLimit is the largest body the route reads, in bytes; 0 reads
	// no body.
	BodyLimit int64
	// Lookup marks a write that changes nothing (name enquiry): it runs
	// outside any database transaction, so a rails call never holds one
	// open; an Idempotency-Key is honoured all the same (idem.DoLookup).
	Lookup bool
	// Outside, when set and true for a request, runs its write as Lookup
	// does: its operation calls a live provider before opening its own
	// transaction (a live virtual account, a live crypto-pay checkout), so
	// no request transaction may be open around it. It is asked once the
	// caller is known and the body read, and after the idempotency step's
	// KeyExtractor, so it may answer from what the extractor found in the
	// request (GraphQL's, on the call's Input). Such a write has no
	// idempotency look-up to confirm a seen key in (ConfirmSeenKey): its key
	// is looked up before it runs.
	Outside func(c *Call) bool
	// ConfirmSeenKey lets a write keyed by its Idempotency-Key header, on
	// a database whose idempotency look-up confirms API keys, skip the
	// look-up of an API key this process has seen: the key is confirmed in
	// the idempotency look-up, a statement the write makes anyway.
	ConfirmSeenKey bool
	// KeyInBody, with ConfirmSeenKey, says a write's idempotency key may
	// also come from its body (GraphQL's input.idempotencyKey), which is
	// read after authentication: a seen API key is then taken on trust up
	// to the idempotency step, which confirms it in its look-up when the
	// request is a keyed write that has one, and otherwise looks it up
	// before anything runs.
	KeyInBody bool
	// AuthenticateWith, when set, answers the request in the statement
	// that authenticates its key (one round trip instead of two); found
	// false, with no error, sends it the usual way.
	AuthenticateWith func(c *Call, key string) (p merchants.Principal, found bool, err error)
}

// Call is one request on its way through the steps.
type Call struct {
	W http.ResponseWriter
	// R is the request; the tenant step gives its context the caller.
	R     *http.Request
	Route *Route
	// Principal is the caller, once authenticated.
	Principal merchants.Principal
	// Body is the request's body, once read (Route.BodyLimit > 0).
	Body []byte
	// Input is the transport's own state of the request (what its
	// decoding step made of the body, a route's parameters).
	Input any
	// confirm is the key hash the idempotency look-up confirms in place
	// of an authentication (Route.ConfirmSeenKey).
	confirm string
}

// Handler is one step's view of the rest of the chain: it answers c, or
// returns the error the transport's Fail writes.
type Handler func(c *Call) error

// Middleware is one step of the chain.
type Middleware func(next Handler) Handler

// Chain composes steps around last: the first step runs first.
func Chain(last Handler, steps ...Middleware) Handler {
	h := last
	for i := len(steps) - 1; i >= 0; i-- {
		h = steps[i](h)
	}
	return h
}

// Fail writes a refusal in a transport's error shape.
type Fail func(w http.ResponseWriter, r *http.Request, err error)

// Serve runs c through h and writes an error h returns with fail.
func Serve(h Handler, c *Call, fail Fail) {
	if err := h(c); err != nil {
		fail(c.W, c.R, err)
	}
}
