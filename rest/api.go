// Package rest is the REST compatibility API: one route table of the
// published paths (and our extensions), the published JSON shapes and the
// envelope. Handlers decode exactly, collect every field error, and call the
// same operations in internal/ that the GraphQL resolvers call.
package rest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/idem"
	"merchantpay/internal/merchants"
	"merchantpay/internal/metrics"
	"merchantpay/internal/obs"
	"merchantpay/internal/ops"
	"merchantpay/internal/store"
	"merchantpay/internal/validate"
	"merchantpay/pipeline"
)

// Prefix is where every documented path starts.
const Prefix = "/v1/merchant/public"

// forbidden refuses a public key on a route that needs a secret one.
const forbidden = "this endpoint needs a secret key (SECK_...); public keys may only list banks and read rates"

// Deps are what the REST layer stands on: the shared request pipeline and
// the operations.
type Deps struct {
	Pipeline *pipeline.Pipeline
	Services ops.Services
}

// API serves the REST paths under Prefix.
type API struct {
	router *router
	// chain is REST's chain of the pipeline's steps, around its handlers.
	chain pipeline.Handler
}

// New builds the REST API.
func New(d Deps) *API {
	a := &API{}
	a.router = newRouter((&Ops{d.Services}).routes(), a.withKey)
	p := d.Pipeline
	a.chain = pipeline.Chain(a.answer,
		p.Authenticated, pipeline.KeyKind, p.RateLimited, refuseBadParams,
		pipeline.Tenant, pipeline.Body, p.Idempotency(idempotencyKey, a.operation, a.writeAnswer))
	return a
}

// call is a REST request's own state in the pipeline (pipeline.Call.Input).
type call struct {
	rt  *Route
	req Request
	// badParam: a path segment that is not valid text.
	badParam bool
	// badQuery: the query string's parameters that cannot be read; the
	// rest are in req.Query.
	badQuery []validate.QueryProblem
	// fast is the answer the route's WithKey found (found true).
	fast  Result
	found bool
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
	query, badQuery := validate.Query(r.URL.RawQuery)
	c := &call{rt: rt, req: Request{Params: params, Query: query}, badQuery: badQuery}
	props := &rt.props
	// A path segment that is not valid text (a NUL, invalid UTF-8) names
	// nothing that could exist: after authentication (by a look-up of the
	// key, no shortcut), 404 on both databases (PostgreSQL could not even
	// compare it).
	for _, v := range params {
		c.badParam = c.badParam || validate.Text(v) != ""
	}
	if c.badParam {
		props = &rt.plain
	}
	pipeline.Serve(a.chain, &pipeline.Call{W: w, R: r, Route: props, Input: c}, a.fail)
}

// refuseBadParams answers 404 for a path with a segment that is not valid
// text, and VALIDATION_ERROR naming the query parameters that cannot be
// read (URL.Query would drop them silently), once the key's kind and rate
// limit are checked.
func refuseBadParams(next pipeline.Handler) pipeline.Handler {
	return func(pc *pipeline.Call) error {
		c := pc.Input.(*call)
		if c.badParam {
			return apperr.New(apperr.NotFound, "nothing found at %s", pc.R.URL.Path)
		}
		if err := validate.QueryError(c.badQuery); err != nil {
			return err
		}
		return next(pc)
	}
}

// idempotencyKey is REST's key extractor: every POST is a write, keyed by
// its Idempotency-Key header.
func idempotencyKey(pc *pipeline.Call) (string, bool, error) {
	return pc.R.Header.Get("Idempotency-Key"), pc.R.Method == http.MethodPost, nil
}

// request is the handler's view of pc.
func request(pc *pipeline.Call) (*call, *Request) {
	c := pc.Input.(*call)
	c.req.HTTP, c.req.Body = pc.R, pc.Body
	return c, &c.req
}

// answer serves a request that changes nothing (a GET).
func (a *API) answer(pc *pipeline.Call) error {
	c, req := request(pc)
	if c.found {
		writeJSON(pc.W, statusOf(c.fast), renderOK(c.fast), false)
		return nil
	}
	res, err := c.rt.Handle(pc.R.Context(), req)
	if err != nil {
		return err
	}
	writeJSON(pc.W, statusOf(res), renderOK(res), false)
	return nil
}

// operation runs a POST's handler inside the idempotency step, handing it
// the step's transaction (Request.Tx), and renders its answer, an error's
// included (stored for replay alike).
func (a *API) operation(ctx context.Context, tx *ent.Tx, pc *pipeline.Call) (idem.Response, bool) {
	c, req := request(pc)
	req.Tx = tx
	res, err := c.rt.Handle(ctx, req)
	if err != nil {
		e := logErr(pc.R.WithContext(ctx), err)
		return idem.Response{Status: e.Kind.Status(), Body: renderError(e, obs.RequestID(ctx)), ContentType: jsonType}, false
	}
	return idem.Response{Status: statusOf(res), Body: renderOK(res), ContentType: jsonType}, true
}

func (a *API) writeAnswer(pc *pipeline.Call, resp idem.Response, replayed bool) {
	writeJSON(pc.W, resp.Status, resp.Body, replayed)
}

// withKey is the pipeline's AuthenticateWith of a route with a WithKey:
// found, its answer waits for the same checks as any other route's (key
// kind, rate limit); missed tells the handler the look-up found nothing.
func (a *API) withKey(pc *pipeline.Call, key string) (merchants.Principal, bool, error) {
	c := pc.Input.(*call)
	p, res, found, err := c.rt.WithKey(pc.R.Context(), key, &Request{HTTP: pc.R, Params: c.req.Params, Query: c.req.Query})
	if err != nil {
		return p, false, err
	}
	c.fast, c.found, c.req.Missed = res, found, !found
	return p, found, nil
}

const jsonType = "application/json; charset=utf-8"

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
	pipeline.SetRetryAfter(h, status)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// fail writes an error envelope.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) { WriteError(w, r, err) }

// WriteError writes err in the envelope (with Retry-After when it is a
// pipeline.RetryError); other packages (the server's middleware) use it so
// every error has one shape.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var re *pipeline.RetryError
	if errors.As(err, &re) {
		w.Header().Set("Retry-After", pipeline.RetryAfter(re.After))
	}
	e := logErr(r, err)
	writeJSON(w, e.Kind.Status(), renderError(e, obs.RequestID(r.Context())), false)
}

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
