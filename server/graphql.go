package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"

	"merchantpay/graph"
	"merchantpay/internal/apperr"
	"merchantpay/internal/merchants"
	"merchantpay/internal/metrics"
	"merchantpay/internal/obs"
	"merchantpay/internal/tenant"
	"merchantpay/rest"
	"merchantpay/server/gqlws"
)

// maxDepth is how deeply an operation may nest its selections
// (introspection-only operations excepted: see depthLimit).
const maxDepth = 12

type gqlHandler struct {
	app     *App
	srv     *handler.Server
	limiter rest.Limiter
}

func newGraphQL(a *App, svc graph.Services, limiter rest.Limiter) http.Handler {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{Svc: svc}})
	srv := handler.New(schema)
	h := &gqlHandler{app: a, srv: srv, limiter: limiter}
	// Our own WebSocket transport: one goroutine per idle subscriber
	// (server/gqlws), where gqlgen's keeps three and the HTTP buffers.
	a.WebSockets = &gqlws.Server{
		CheckOrigin: originChecker(a.Config.AllowedOrigins),
		Init:        h.wsInit,
		Authorize:   h.wsAuthorize,
		Mutation:    h.wsMutation,
		InitTimeout: 10 * time.Second,
		KeepAlive:   15 * time.Second,
		// Caps on what one client holds open on this instance.
		MaxSubscriptions: a.Config.WSMaxSubscriptions,
		MaxSocketsPerKey: a.Config.WSMaxSocketsPerKey,
		SocketKey: func(ctx context.Context) string {
			p, _ := merchants.PrincipalFrom(ctx)
			return p.KeyHash
		},
		Refuse: gqlFail,
	}
	srv.AddTransport(a.WebSockets)
	srv.AddTransport(httpTransport{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.Use(newDocumentSize())
	srv.Use(depthLimit{max: maxDepth})
	srv.Use(subscriptionRules{})
	srv.Use(newStringVariables(schema.Schema()))
	srv.Use(wsRateLimit{h}) // the first token; operationLimits takes the rest
	srv.Use(newOperationLimits(h, schema.Schema(), a.Config))
	srv.Use(observeOperation{tracer: a.Tracing.Tracer()})
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(func(ctx context.Context, p any) error {
		obs.Log(ctx).Error("panic in resolver", "panic", p)
		return apperr.New(apperr.Internal, "internal error")
	})
	return h
}

func withPrincipal(ctx context.Context, p merchants.Principal) context.Context {
	ctx = merchants.WithPrincipal(tenant.With(ctx, p.Tenant()), p)
	return obs.With(ctx, "merchant", p.MerchantID, "mode", p.Mode)
}

func (h *gqlHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if websocket.IsWebSocketUpgrade(r) {
		metrics.SetRoute(ctx, "graphql websocket")
		if rest.KeyFrom(r.Header) != "" {
			p, err := h.authorize(r)
			if err != nil {
				gqlFail(w, r, err)
				return
			}
			r = r.WithContext(withPrincipal(ctx, p))
		}
		h.srv.ServeHTTP(w, r)
		return
	}
	// Named again by its operation once it is parsed (observeOperation).
	metrics.SetRoute(ctx, "graphql")
	switch r.Method {
	case http.MethodGet:
		h.serveGet(w, r)
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, POST")
		gqlFail(w, r, apperr.New(apperr.MethodNotAllowed, "GraphQL takes POST requests, GET requests for queries, and WebSocket upgrades for subscriptions"))
		return
	}
	p, err := h.authorize(r)
	if err != nil {
		gqlFail(w, r, err)
		return
	}
	body, err := rest.ReadBody(w, r)
	if err != nil {
		gqlFail(w, r, err)
		return
	}
	// One JSON value and nothing after it: inspect and the transport must
	// read the same request, or a mutation could run outside its
	// transaction and its Idempotency-Key.
	if !json.Valid(body) {
		gqlFail(w, r, apperr.New(apperr.BadRequest, "the request body is not valid JSON"))
		return
	}
	params, err := decodeParams(body)
	if err != nil {
		gqlFail(w, r, err)
		return
	}
	ctx = context.WithValue(withPrincipal(ctx, p), overHTTPKey{}, true)
	key, mutation, err := inspect(params, r.Header.Get("Idempotency-Key"))
	if err != nil {
		gqlFail(w, r, err)
		return
	}
	st := &httpStatus{}
	ctx = context.WithValue(ctx, httpStatusKey{}, st)
	if !mutation {
		h.srv.ServeHTTP(statusWriter{w, st}, requestWith(r, ctx, body))
		return
	}
	resp, replayed, err := h.mutate(ctx, r, p, key, body)
	if err != nil {
		gqlFail(w, r, err)
		return
	}
	if resp.ContentType != "" {
		w.Header().Set("Content-Type", resp.ContentType)
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	// The status follows from the answer, replayed or not (a refusal by
	// the rate limit excepted); the status stored above only decides what
	// is replayed.
	w.WriteHeader(st.apply(w.Header(), answerStatus(resp.ContentType, resp.Body)))
	_, _ = w.Write(resp.Body)
}

func (h *gqlHandler) authorize(r *http.Request) (merchants.Principal, error) {
	p, err := rest.Authenticate(r.Context(), h.app.Merchants, r.Header)
	if err != nil {
		return p, err
	}
	if p.Kind != merchants.Secret {
		return p, apperr.New(apperr.Forbidden, "GraphQL needs a secret key (SECK_...)")
	}
	return p, h.allow(p)
}

// allow applies the per-key rate limit.
func (h *gqlHandler) allow(p merchants.Principal) error {
	if h.limiter != nil {
		if ok, retry := h.limiter.Allow(limiterKey(p)); !ok {
			return &retryError{apperr.New(apperr.RateLimited, "too many requests for this key; retry after %d s", retry), retry}
		}
	}
	return nil
}

// limiterKey is p's bucket in the rate limit, the one REST uses.
func limiterKey(p merchants.Principal) string { return p.KeyPrefix + p.MerchantID + p.Mode + p.Kind }

type retryError struct {
	err   *apperr.Error
	after int
}

func (e *retryError) Error() string { return e.err.Error() }
func (e *retryError) Unwrap() error { return e.err }
