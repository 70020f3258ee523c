package rest

import (
	"context"
	"net/http"
	"strings"

	"merchantpay/internal/merchants"
)

// Access says which keys may call a route.
type Access int

const (
	// SecretKey routes need a secret key.
	SecretKey Access = iota
	// PublicKey routes also take a public key (safe in a browser).
	PublicKey
)

// Request is what a handler sees.
type Request struct {
	HTTP   *http.Request
	Params map[string]string
	Body   []byte
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
	// WithKey, when set, answers a GET in the statement that authenticates
	// its key (one round trip instead of two). found false, with no error,
	// sends the request the usual way: Authenticate, then Handle.
	WithKey func(ctx context.Context, key string, r *Request) (p merchants.Principal, res Result, found bool, err error)
	parts   []string
}

type router struct{ routes []*Route }

func newRouter(routes []Route) *router {
	r := &router{}
	for i := range routes {
		rt := routes[i]
		rt.parts = split(rt.Pattern)
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
