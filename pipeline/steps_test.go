package pipeline_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"merchantpay/internal/apperr"
	"merchantpay/internal/merchants"
	"merchantpay/pipeline"
)

// fakeAuth knows one secret and one public key and counts look-ups; seen
// are the keys this process has "seen" (merchants.Service.Seen).
type fakeAuth struct {
	lookups int
	seen    map[string]merchants.Principal
	forgot  []string
}

var (
	secret = merchants.Principal{MerchantID: "m1", Mode: "test", Kind: merchants.Secret, KeyPrefix: "SECK_1", KeyHash: "h-secret"}
	public = merchants.Principal{MerchantID: "m1", Mode: "test", Kind: merchants.Public, KeyPrefix: "PUBK_1", KeyHash: "h-public"}
)

func (a *fakeAuth) Authenticate(_ context.Context, key string) (merchants.Principal, error) {
	a.lookups++
	switch key {
	case "SECK_1":
		return secret, nil
	case "PUBK_1":
		return public, nil
	}
	return merchants.Principal{}, apperr.New(apperr.Unauthorized, "invalid API key")
}

func (a *fakeAuth) Seen(key string) (merchants.Principal, bool) { p, ok := a.seen[key]; return p, ok }
func (a *fakeAuth) Forget(h string)                             { a.forgot = append(a.forgot, h) }

// fakeLimiter refuses every request after the first `left`.
type fakeLimiter struct {
	left  int
	keys  []string
	retry int
}

func (l *fakeLimiter) Allow(key string) (bool, int) { return l.AllowN(key, 1) }
func (l *fakeLimiter) AllowN(key string, n int) (bool, int) {
	l.keys = append(l.keys, key)
	if l.left < n {
		return false, l.retry
	}
	l.left -= n
	return true, 0
}

func call(route *pipeline.Route, method string, body string, hdr map[string]string) *pipeline.Call {
	r := httptest.NewRequest(method, "/x", strings.NewReader(body))
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	return &pipeline.Call{W: httptest.NewRecorder(), R: r, Route: route}
}

// reached is the end of a chain under test: it records the call it got.
func reached(got **pipeline.Call) pipeline.Handler {
	return func(c *pipeline.Call) error { *got = c; return nil }
}

// TestChainOrder: steps run first to last, each may stop the chain with an
// error, and Serve writes that error with the transport's Fail.
func TestChainOrder(t *testing.T) {
	var order []string
	step := func(name string, fail bool) pipeline.Middleware {
		return func(next pipeline.Handler) pipeline.Handler {
			return func(c *pipeline.Call) error {
				order = append(order, name)
				if fail {
					return apperr.New(apperr.Validation, "%s refused", name)
				}
				return next(c)
			}
		}
	}
	last := func(*pipeline.Call) error { order = append(order, "last"); return nil }
	pipeline.Serve(pipeline.Chain(last, step("a", false), step("b", false)), call(&pipeline.Route{}, "GET", "", nil), nil)
	if strings.Join(order, ",") != "a,b,last" {
		t.Fatalf("order %v, want a,b,last", order)
	}
	order = nil
	var failed error
	pipeline.Serve(pipeline.Chain(last, step("a", false), step("b", true), step("c", false)), call(&pipeline.Route{}, "GET", "", nil),
		func(_ http.ResponseWriter, _ *http.Request, err error) { failed = err })
	if strings.Join(order, ",") != "a,b" || apperr.As(failed).Kind != apperr.Validation {
		t.Fatalf("order %v, failure %v: want a,b and b's refusal", order, failed)
	}
}

// TestAuthenticated: the key is looked up once, from X-API-KEY or a Bearer
// token; a missing or unknown key is 401; a route's AuthenticateWith
// answers instead of the look-up when it finds the request, and falls back
// to it when it does not.
func TestAuthenticated(t *testing.T) {
	auth := &fakeAuth{}
	p := pipeline.New(auth, nil, nil)
	var got *pipeline.Call
	h := pipeline.Chain(reached(&got), p.Authenticated)
	route := &pipeline.Route{}

	for _, hdr := range []map[string]string{{"X-API-KEY": "SECK_1"}, {"Authorization": "Bearer SECK_1"}} {
		got = nil
		if err := h(call(route, "GET", "", hdr)); err != nil || got == nil || got.Principal != secret {
			t.Fatalf("%v: err %v, principal %+v", hdr, err, got)
		}
	}
	if auth.lookups != 2 {
		t.Fatalf("%d look-ups, want 2", auth.lookups)
	}
	for _, hdr := range []map[string]string{nil, {"X-API-KEY": "SECK_nope"}} {
		got = nil
		if err := h(call(route, "GET", "", hdr)); apperr.As(err).Kind != apperr.Unauthorized || got != nil {
			t.Fatalf("%v: err %v, reached %v; want UNAUTHORIZED", hdr, err, got != nil)
		}
	}

	found := true
	with := &pipeline.Route{AuthenticateWith: func(c *pipeline.Call, key string) (merchants.Principal, bool, error) {
		if key != "SECK_1" {
			t.Errorf("AuthenticateWith got key %q", key)
		}
		if found {
			return secret, true, nil
		}
		return merchants.Principal{}, false, nil
	}}
	auth.lookups = 0
	if err := h(call(with, "GET", "", map[string]string{"X-API-KEY": "SECK_1"})); err != nil || got.Principal != secret || auth.lookups != 0 {
		t.Fatalf("found: err %v, %d look-ups; want none", err, auth.lookups)
	}
	found = false
	if err := h(call(with, "GET", "", map[string]string{"X-API-KEY": "SECK_1"})); err != nil || got.Principal != secret || auth.lookups != 1 {
		t.Fatalf("not found: err %v, %d look-ups; want one", err, auth.lookups)
	}
}

// TestKeyKind: a public key is refused (403, with the route's message)
// where a secret key is needed, and taken where the route allows it.
func TestKeyKind(t *testing.T) {
	var got *pipeline.Call
	h := pipeline.Chain(reached(&got), pipeline.KeyKind)
	secretOnly := &pipeline.Route{Forbidden: "secret keys only here"}
	c := call(secretOnly, "GET", "", nil)
	c.Principal = public
	err := h(c)
	if e := apperr.As(err); e.Kind != apperr.Forbidden || e.Message != "secret keys only here" || got != nil {
		t.Fatalf("public key on a secret route: %v", err)
	}
	c.Principal = secret
	if err := h(c); err != nil || got == nil {
		t.Fatalf("secret key: %v", err)
	}
	got = nil
	c = call(&pipeline.Route{Access: pipeline.PublicKey}, "GET", "", nil)
	c.Principal = public
	if err := h(c); err != nil || got == nil {
		t.Fatalf("public key on a public route: %v", err)
	}
}

// TestRateLimited: one token per request from the key's bucket; an empty
// bucket is RATE_LIMITED with the wait as a RetryError, and nothing after
// the step runs.
func TestRateLimited(t *testing.T) {
	lim := &fakeLimiter{left: 1, retry: 7}
	p := pipeline.New(&fakeAuth{}, lim, nil)
	var got *pipeline.Call
	h := pipeline.Chain(reached(&got), p.RateLimited)
	c := call(&pipeline.Route{}, "GET", "", nil)
	c.Principal = secret
	if err := h(c); err != nil || got == nil {
		t.Fatalf("first: %v", err)
	}
	got = nil
	err := h(c)
	var re *pipeline.RetryError
	if !errors.As(err, &re) || re.After != 7 || apperr.As(err).Kind != apperr.RateLimited || got != nil {
		t.Fatalf("second: %v (reached %v), want RATE_LIMITED after 7 s", err, got != nil)
	}
	if want := pipeline.LimiterKey(secret); lim.keys[0] != want || lim.keys[1] != want {
		t.Fatalf("buckets %v, want %q", lim.keys, want)
	}
	if pipeline.RetryAfter(0) != "1" || pipeline.RetryAfter(7) != "7" {
		t.Fatalf("RetryAfter(0) %q, RetryAfter(7) %q", pipeline.RetryAfter(0), pipeline.RetryAfter(7))
	}
	// Without a limiter every request passes.
	free := pipeline.Chain(reached(&got), pipeline.New(&fakeAuth{}, nil, nil).RateLimited)
	if err := free(c); err != nil {
		t.Fatalf("no limiter: %v", err)
	}
}

// TestBody: the route's limit is the largest body read (413 over it), the
// body must be JSON (415), and a route with no limit reads nothing.
func TestBody(t *testing.T) {
	var got *pipeline.Call
	h := pipeline.Chain(reached(&got), pipeline.Body)
	small := &pipeline.Route{BodyLimit: 8}
	json := map[string]string{"Content-Type": "application/json"}
	if err := h(call(small, "POST", `{"a":1}`, json)); err != nil || string(got.Body) != `{"a":1}` {
		t.Fatalf("within the limit: %v", err)
	}
	got = nil
	err := h(call(small, "POST", `{"a":100}`, json))
	if e := apperr.As(err); e.Kind != apperr.PayloadTooLarge || e.Message != "the request body is over 8 bytes" || got != nil {
		t.Fatalf("over the limit: %v", err)
	}
	mib := &pipeline.Route{BodyLimit: pipeline.MaxBody}
	err = h(call(mib, "POST", `{"a":"`+strings.Repeat("x", pipeline.MaxBody)+`"}`, json))
	if e := apperr.As(err); e.Kind != apperr.PayloadTooLarge || e.Message != "the request body is over 1 MiB" {
		t.Fatalf("over 1 MiB: %v", err)
	}
	if err := h(call(small, "POST", `a=1`, map[string]string{"Content-Type": "text/plain"})); apperr.As(err).Kind != apperr.UnsupportedMediaType {
		t.Fatalf("text/plain: %v", err)
	}
	if err := h(call(&pipeline.Route{}, "POST", `{"a":1}`, json)); err != nil || got.Body != nil {
		t.Fatalf("no limit: %v, body %q, want none read", err, got.Body)
	}
}

// TestTenant: after the step the request's context acts for the caller.
func TestTenant(t *testing.T) {
	var got *pipeline.Call
	c := call(&pipeline.Route{}, "GET", "", nil)
	c.Principal = secret
	if err := pipeline.Chain(reached(&got), pipeline.Tenant)(c); err != nil {
		t.Fatal(err)
	}
	if p, ok := merchants.PrincipalFrom(got.R.Context()); !ok || p != secret {
		t.Fatalf("principal in context: %+v %v", p, ok)
	}
}
