package rest

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"merchantpay/ent"
	"merchantpay/internal/merchants"
	"merchantpay/pipeline"
)

// Access says which keys may call a route.
type Access = pipeline.Access

const (
	// SecretKey routes need a secret key.
	SecretKey = pipeline.SecretKey
	// PublicKey routes also take a public key (safe in a browser).
	PublicKey = pipeline.PublicKey
)

// Request is what a handler sees.
type Request struct {
	HTTP   *http.Request
	Params map[string]string
	// Query is the URL's query string, read once (a request whose query
	// string does not read is refused before its handler runs).
	Query url.Values
	Body  []byte
	// Tx is a POST's database transaction, opened by the idempotency step
	// (nil for a Lookup route and a GET). The handler hands it as an
	// argument to every operation that reads or writes in it; the context
	// does not carry it.
	Tx *ent.Tx
	// Missed is true when the route's WithKey ran with the request's key
	// and found nothing; the key has since been authenticated, so the
	// look-up it made need not be made again.
	Missed bool
}

// Param is a path parameter.
func (r *Request) Param(name string) string { return r.Params[name] }

// Handler answers one route.
type Handler func(ctx context.Context, r *Request) (Result, error)

// Route is one documented path.
type Route struct {
	Method  string
	Pattern string // segments; {name} matches one segment
	Access  Access
	Handle  Handler
	// Lookup marks a POST that changes nothing (name enquiry): it runs
	// outside any database transaction, so a rails call never holds one
	// open; an Idempotency-Key is honoured all the same (idem.DoLookup).
	Lookup bool
	// Outside, when set and true for the caller's mode, runs the POST as
	// Lookup does: its operation calls a live provider before opening its
	// own transaction (a live virtual account, a live crypto-pay checkout),
	// so no request transaction may be open around it.
	Outside func(mode string) bool
	// WithKey, when set, answers a GET in the statement that authenticates
	// its key (one round trip instead of two). found false, with no error,
	// sends the request the usual way: Authenticate, then Handle.
	WithKey func(ctx context.Context, key string, r *Request) (p merchants.Principal, res Result, found bool, err error)
	parts   []string
	// props are the route's properties for the pipeline; plain the same
	// without the shortcuts of authentication (a request refused anyway).
	props, plain pipeline.Route
}

type router struct{ routes []*Route }

// newRouter builds the router of routes; withKey is the pipeline's
// AuthenticateWith of a route with a WithKey.
func newRouter(routes []Route, withKey func(*pipeline.Call, string) (merchants.Principal, bool, error)) *router {
	r := &router{}
	for i := range routes {
		rt := routes[i]
		rt.parts = split(rt.Pattern)
		rt.plain = pipeline.Route{Access: rt.Access, Forbidden: forbidden, Lookup: rt.Lookup}
		if outside := rt.Outside; outside != nil {
			rt.plain.Outside = func(c *pipeline.Call) bool { return outside(c.Principal.Mode) }
		}
		if rt.Method == http.MethodPost {
			rt.plain.BodyLimit = pipeline.MaxBody
		}
		rt.props = rt.plain
		// A keyed POST confirms a seen API key in its idempotency look-up.
		rt.props.ConfirmSeenKey = rt.Method == http.MethodPost && !rt.Lookup && rt.Outside == nil
		if rt.WithKey != nil {
			rt.props.AuthenticateWith = withKey
		}
		r.routes = append(r.routes, &rt)
	}
	return r
}

func split(p string) []string { return strings.Split(strings.Trim(p, "/"), "/") }

// splitPath splits a request's path (after the prefix) into segments: nil,
// which matches no route, unless it is "/" followed by non-empty segments.
// "/wallets/", "//wallets" and "/wallets//" are unknown paths, not aliases.
func splitPath(p string) []string {
	if !strings.HasPrefix(p, "/") {
		return nil
	}
	parts := strings.Split(p[1:], "/")
	for _, s := range parts {
		if s == "" {
			return nil
		}
	}
	return parts
}

// match finds the route; pathKnown is true when some route has the path
// (so a wrong method is 405, not 404).
func (r *router) match(method, path string) (rt *Route, params map[string]string, pathKnown bool) {
	parts := splitPath(path)
	var allowed []string
	for _, cand := range r.routes {
		p, ok := matchParts(cand.parts, parts)
		if !ok {
			continue
		}
		if cand.Method == method {
			return cand, p, true
		}
		allowed = append(allowed, cand.Method)
	}
	return nil, nil, len(allowed) > 0
}

func (r *router) allowed(path string) []string {
	parts := splitPath(path)
	var out []string
	for _, cand := range r.routes {
		if _, ok := matchParts(cand.parts, parts); ok {
			out = append(out, cand.Method)
		}
	}
	return out
}

func matchParts(pattern, parts []string) (map[string]string, bool) {
	if len(pattern) != len(parts) {
		return nil, false
	}
	var params map[string]string
	for i, seg := range pattern {
		if strings.HasPrefix(seg, "{") {
			if parts[i] == "" {
				return nil, false
			}
			if params == nil {
				params = map[string]string{}
			}
			params[seg[1:len(seg)-1]] = parts[i]
			continue
		}
		if seg != parts[i] {
			return nil, false
		}
	}
	return params, true
}
