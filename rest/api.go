// Package rest is the REST compatibility API: one route table of the
// published paths (and our extensions), the published JSON shapes and the
// envelope. Handlers decode exactly, collect every field error, and call the
// same operations in internal/ that the GraphQL resolvers call.
package rest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"merchantpay/internal/apperr"
	"merchantpay/internal/idem"
	"merchantpay/internal/merchants"
	"merchantpay/internal/metrics"
	"merchantpay/internal/obs"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/validate"
)

// Prefix is where every documented path starts.
const Prefix = "/v1/merchant/public"

// MaxBody is the largest request body, 1 MiB; a larger one is 413
// PAYLOAD_TOO_LARGE.
const MaxBody = 1 << 20

// Authenticator finds the caller of a key.
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

// Deps are the operations the REST layer calls.
type Deps struct {
	Auth    Authenticator
	Limiter Limiter
	Idem    *idem.Store
	Ops     *Ops
}

// API serves the REST paths under Prefix.
type API struct {
	deps   Deps
	router *router
}

// New builds the REST API.
func New(d Deps) *API {
	return &API{deps: d, router: newRouter(d.Ops.routes())}
}

// KeyFrom reads the API key of a request: X-API-KEY, or Authorization: Bearer.
func KeyFrom(h http.Header) string {
	if k := strings.TrimSpace(h.Get("X-API-KEY")); k != "" {
		return k
	}
	if a := h.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	path := strings.TrimPrefix(r.URL.Path, Prefix)
	if r.Method == http.MethodOptions && a.preflight(w, path) {
		return
	}
	rt, params, known := a.router.match(r.Method, path)
	if rt != nil {
		metrics.SetRoute(ctx, rt.Method+" "+Prefix+rt.Pattern)
	}
	if rt != nil && rt.Access == PublicKey {
		allowOrigins(w.Header())
	}
	if rt == nil {
		if known {
			allowed := a.router.allowed(path)
			if a.publicRoute(path) {
				allowed = append(allowed, http.MethodOptions) // the CORS preflight
			}
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			a.fail(w, r, apperr.New(apperr.MethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path))
			return
		}
		a.fail(w, r, apperr.New(apperr.NotFound, "no route for %s %s", r.Method, r.URL.Path))
		return
	}
	// A path segment that is not valid text (a NUL, invalid UTF-8) names
	// nothing that could exist: after authentication, 404 on both
	// databases (PostgreSQL could not even compare it).
	badParam := false
	for _, v := range params {
		badParam = badParam || validate.Text(v) != ""
	}
	var p merchants.Principal
	var fast Result
	var found, missed bool
	var err error
	if !badParam {
		p, fast, found, missed, err = a.withKey(ctx, rt, r, params)
	}
	// A keyed POST on PostgreSQL confirms its API key in its idempotency
	// look-up, a statement it makes anyway: a key seen before needs no
	// statement of its own (one round trip of a withdrawal's five).
	confirm := ""
	if err == nil && !found && !badParam && r.Method == http.MethodPost && !rt.Lookup && a.deps.Idem.ConfirmsKeys() {
		if ik := r.Header.Get("Idempotency-Key"); ik != "" && idem.CheckKey(ik) == nil {
			if seen, ok := a.deps.Auth.Seen(KeyFrom(r.Header)); ok {
				p, confirm = seen, seen.KeyHash
			}
		}
	}
	if err == nil && !found && confirm == "" {
		p, err = Authenticate(ctx, a.deps.Auth, r.Header)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if p.Kind != merchants.Secret && rt.Access != PublicKey {
		a.fail(w, r, apperr.New(apperr.Forbidden, "this endpoint needs a secret key (SECK_...); public keys may only list banks and read rates"))
		return
	}
	if a.deps.Limiter != nil {
		if ok, retry := a.deps.Limiter.Allow(p.KeyPrefix + p.MerchantID + p.Mode + p.Kind); !ok {
			w.Header().Set("Retry-After", itoa(retry))
			a.fail(w, r, apperr.New(apperr.RateLimited, "too many requests for this key; retry after %d s", retry))
			return
		}
	}
	if badParam {
		a.fail(w, r, apperr.New(apperr.NotFound, "nothing found at %s", r.URL.Path))
		return
	}
	ctx = merchants.WithPrincipal(tenant.With(ctx, p.Tenant()), p)
	ctx = obs.With(ctx, "merchant", p.MerchantID, "mode", p.Mode)
	req := &Request{HTTP: r.WithContext(ctx), Params: params, Missed: missed}

	if r.Method == http.MethodPost {
		body, err := ReadBody(w, r)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		req.Body = body
	}
	if found {
		writeJSON(w, statusOf(fast), renderOK(fast), false)
		return
	}
	if r.Method != http.MethodPost {
		res, err := rt.Handle(ctx, req)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		writeJSON(w, statusOf(res), renderOK(res), false)
		return
	}

	do := a.deps.Idem.Do
	if rt.Lookup {
		do = a.deps.Idem.DoLookup // outside any transaction, keyed all the same
	}
	key := r.Header.Get("Idempotency-Key")
	resp, replayed, err := do(ctx, idem.Request{
		Tenant: p.Tenant(), Key: key, Hash: idem.HashRequest(r.Method, r.URL.Path, req.Body), KeyHash: confirm,
	}, func(ctx context.Context) (idem.Response, bool) {
		res, err := rt.Handle(ctx, req)
		if err != nil {
			e := a.logError(r.WithContext(ctx), err)
			return idem.Response{Status: e.Kind.Status(), Body: renderError(e, obs.RequestID(ctx)), ContentType: jsonType}, false
		}
		return idem.Response{Status: statusOf(res), Body: renderOK(res), ContentType: jsonType}, true
	})
	if err != nil {
		if errors.Is(err, idem.ErrKeyNotLive) {
			a.deps.Auth.Forget(confirm)
		}
		a.fail(w, r, err)
		return
	}
	writeJSON(w, resp.Status, resp.Body, replayed)
}

// withKey runs rt's WithKey, if it has one; missed says it ran and found
// nothing. Its answer is written only after the same checks as any other
// route's (key kind, rate limit).
func (a *API) withKey(ctx context.Context, rt *Route, r *http.Request, params map[string]string) (p merchants.Principal, res Result, found, missed bool, err error) {
	if rt.WithKey == nil {
		return p, res, false, false, nil
	}
	key := KeyFrom(r.Header)
	if key == "" {
		return p, res, false, false, nil
	}
	p, res, found, err = rt.WithKey(ctx, key, &Request{HTTP: r, Params: params})
	return p, res, found, !found && err == nil, err
}

const jsonType = "application/json; charset=utf-8"

// ReadBody checks the media type and reads at most MaxBody bytes. A body
// of unknown length (chunked: ContentLength -1) is checked as any other.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	if ct != "" || r.ContentLength != 0 {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, apperr.New(apperr.UnsupportedMediaType, "the request body must be application/json")
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, apperr.New(apperr.PayloadTooLarge, "the request body is over 1 MiB")
		}
		return nil, apperr.Wrap(apperr.BadRequest, err, "could not read the request body")
	}
	return body, nil
}

// The routes a public key may call are meant for browsers (a public key is
// safe to ship in a page), on the merchant's own site: they answer any origin
// (CORS), and a browser's preflight of them is answered without a key, which
// it never sends. Every other route needs a secret key, which has no business
// in a browser: no CORS there, and OPTIONS stays 405.

// publicRoute reports whether path is a route a public key may call (a
// GET).
func (a *API) publicRoute(path string) bool {
	rt, _, _ := a.router.match(http.MethodGet, path)
	return rt != nil && rt.Access == PublicKey
}

// preflight answers a CORS preflight (OPTIONS) of a public-key route at
// path; false when path is no such route.
func (a *API) preflight(w http.ResponseWriter, path string) bool {
	if !a.publicRoute(path) {
		return false
	}
	h := w.Header()
	allowOrigins(h)
	h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "X-API-KEY, Authorization, Content-Type")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}

// allowOrigins lets a page of any origin read the answer, and the headers
// a caller may need from it.
func allowOrigins(h http.Header) {
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Expose-Headers", "X-Request-Id, Retry-After")
}

// Authenticate finds the caller of a request's key.
func Authenticate(ctx context.Context, auth Authenticator, h http.Header) (merchants.Principal, error) {
	key := KeyFrom(h)
	if key == "" {
		return merchants.Principal{}, apperr.New(apperr.Unauthorized, "missing API key: send it in the X-API-KEY header")
	}
	return auth.Authenticate(ctx, key)
}

func statusOf(res Result) int {
	if res.Status == 0 {
		return http.StatusOK
	}
	return res.Status
}

func writeJSON(w http.ResponseWriter, status int, body []byte, replayed bool) {
	h := w.Header()
	h.Set("Content-Type", jsonType)
	if replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	SetRetryAfter(h, status)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// fail writes an error envelope.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := a.logError(r, err)
	writeJSON(w, e.Kind.Status(), renderError(e, obs.RequestID(r.Context())), false)
}

// WriteError writes err in the envelope; other packages (the server's
// middleware) use it so every error has one shape.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	e := logErr(r, err)
	writeJSON(w, e.Kind.Status(), renderError(e, obs.RequestID(r.Context())), false)
}

func (a *API) logError(r *http.Request, err error) *apperr.Error { return logErr(r, err) }

func logErr(r *http.Request, err error) *apperr.Error {
	e := apperr.As(store.Classify(err))
	metrics.SetCode(r.Context(), string(e.Kind))
	if e.Kind.Status() >= 500 {
		level := obs.FailureLevel(r.Context())
		if e.Kind == apperr.Unavailable && level > slog.LevelWarn {
			// The database is down or failing over: every request says so
			// until it is back, and /readyz already does; not an error of
			// this request.
			level = slog.LevelWarn
		}
		obs.Log(r.Context()).Log(r.Context(), level, "request failed", "method", r.Method, "path", r.URL.Path, "code", e.Kind, "err", err)
	}
	return e
}

func itoa(n int) string {
	if n < 1 {
		n = 1
	}
	return strconv.Itoa(n)
}
