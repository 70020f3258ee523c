package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"

	"merchantpay/graph"
	"merchantpay/internal/apperr"
	"merchantpay/internal/idem"
	"merchantpay/internal/merchants"
	"merchantpay/internal/metrics"
	"merchantpay/internal/obs"
	"merchantpay/internal/ops"
	"merchantpay/pipeline"
	"merchantpay/server/gqlws"
)

// maxDepth is how deeply an operation may nest its selections
// (introspection-only operations excepted: see depthLimit).
const maxDepth = 12

// GraphQL's rows of route properties for the shared pipeline: a POST reads
// a body, a GET its URL, a WebSocket upgrade neither; all need a secret
// key. A POST's mutation is keyed by the Idempotency-Key header or its
// input.idempotencyKey, so it confirms a seen API key in its idempotency
// look-up as a keyed REST write does.
var (
	gqlPost = pipeline.Route{Forbidden: "GraphQL needs a secret key (SECK_...)", BodyLimit: pipeline.MaxBody,
		ConfirmSeenKey: true, KeyInBody: true}
	gqlGet     = pipeline.Route{Forbidden: "GraphQL needs a secret key (SECK_...)"}
	gqlUpgrade = pipeline.Route{Forbidden: "GraphQL needs a secret key (SECK_...)"}
	gqlSocket  = pipeline.Route{Forbidden: "subscriptions need a secret key"}
)

type gqlHandler struct {
	app  *App
	pipe *pipeline.Pipeline
	srv  *handler.Server
	// The chains of the shared pipeline's steps, one per way in.
	post, get, upgrade, wsMutate pipeline.Handler
	// postRoute and socketRoute are gqlPost and gqlSocket with this
	// handler's Outside: a mutation that calls a live provider runs
	// outside a request transaction.
	postRoute, socketRoute pipeline.Route
}

// gqlCall is a GraphQL request's own state in the pipeline
// (pipeline.Call.Input).
type gqlCall struct {
	params *graphql.RawParams
	// st is the status an operation refused by its limits asks for.
	st *httpStatus
	// key is a mutation's idempotency key and provider whether it selects
	// one that calls a live provider, both found by inspect; answer is a
	// WebSocket mutation's answer.
	key      string
	provider bool
	answer   []byte
}

func newGraphQL(a *App, svc ops.Services, pipe *pipeline.Pipeline) http.Handler {
	schema := graph.NewExecutableSchema(graph.Config{Resolvers: &graph.Resolver{Svc: svc}})
	srv := handler.New(schema)
	h := &gqlHandler{app: a, srv: srv, pipe: pipe, postRoute: gqlPost, socketRoute: gqlSocket}
	h.postRoute.Outside = h.outside
	h.socketRoute.Outside = h.outside
	h.post = pipeline.Chain(h.query,
		pipe.Authenticated, pipeline.KeyKind, pipe.RateLimited, pipeline.Body, pipeline.Tenant,
		decodeBody, pipe.Idempotency(httpKey, h.execute, writeMutation))
	h.get = pipeline.Chain(h.query,
		pipe.Authenticated, pipeline.KeyKind, pipe.RateLimited, pipeline.Tenant, decodeURL)
	h.upgrade = pipeline.Chain(h.serveSocket,
		pipe.Authenticated, pipeline.KeyKind, pipe.RateLimited, pipeline.Tenant)
	h.wsMutate = pipeline.Chain(notMutation,
		pipe.RateLimited, pipe.Idempotency(socketKey, h.execute, keepAnswer))
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
	// Both ways in list every bad variable value at once: queries and
	// subscriptions over WebSocket get the list from the WebSocket wrapper
	// too, and WebSocket mutations run through httpTransport (wsMutation).
	// Both keep every answer, errors included, within the size cap.
	srv.AddTransport(boundAnswers{Transport: listVariableErrors{Transport: a.WebSockets, schema: schema.Schema()},
		maxBytes: a.Config.GraphQLMaxResponseBytes})
	srv.AddTransport(boundAnswers{Transport: listVariableErrors{Transport: httpTransport{}, schema: schema.Schema()},
		maxBytes: a.Config.GraphQLMaxResponseBytes})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.SetValidationRulesFn(validationRules)
	srv.Use(extension.Introspection{})
	srv.Use(newDocumentSize())
	srv.Use(depthLimit{max: maxDepth})
	srv.Use(subscriptionRules{})
	srv.Use(variableTypes{schema: schema.Schema()})
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

func (h *gqlHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if websocket.IsWebSocketUpgrade(r) {
		metrics.SetRoute(ctx, "graphql websocket")
		if pipeline.KeyFrom(r.Header) == "" {
			// Authenticated by its connection_init payload (wsInit).
			h.srv.ServeHTTP(w, r)
			return
		}
		pipeline.Serve(h.upgrade, &pipeline.Call{W: w, R: r, Route: &gqlUpgrade}, gqlFail)
		return
	}
	// Named again by its operation once it is parsed (observeOperation).
	metrics.SetRoute(ctx, "graphql")
	switch r.Method {
	case http.MethodGet:
		pipeline.Serve(h.get, &pipeline.Call{W: w, R: r, Route: &gqlGet, Input: &gqlCall{}}, gqlFail)
	case http.MethodPost:
		pipeline.Serve(h.post, &pipeline.Call{W: w, R: r, Route: &h.postRoute, Input: &gqlCall{}}, gqlFail)
	default:
		w.Header().Set("Allow", "GET, POST")
		gqlFail(w, r, apperr.New(apperr.MethodNotAllowed, "GraphQL takes POST requests, GET requests for queries, and WebSocket upgrades for subscriptions"))
	}
}

// serveSocket hands an authenticated WebSocket upgrade to the transport.
func (h *gqlHandler) serveSocket(c *pipeline.Call) error {
	h.srv.ServeHTTP(c.W, c.R)
	return nil
}

// decodeBody is the POST transport's decoding step: the body is one JSON
// value and nothing after it (the key extractor and the executor must
// read the same request, or a mutation could run outside its transaction
// and its Idempotency-Key), holding a GraphQL request.
func decodeBody(next pipeline.Handler) pipeline.Handler {
	return func(c *pipeline.Call) error {
		if !json.Valid(c.Body) {
			return apperr.New(apperr.BadRequest, "the request body is not valid JSON")
		}
		params, err := decodeParams(c.Body)
		if err != nil {
			return err
		}
		g := c.Input.(*gqlCall)
		g.params = params
		overHTTP(c, g)
		return next(c)
	}
}

// overHTTP marks c's context as a request over plain HTTP, with the status
// its operation's limits may ask for.
func overHTTP(c *pipeline.Call, g *gqlCall) {
	g.st = &httpStatus{}
	ctx := context.WithValue(c.R.Context(), overHTTPKey{}, true)
	c.R = c.R.WithContext(context.WithValue(ctx, httpStatusKey{}, g.st))
}

// httpKey is the POST transport's key extractor: a mutation is a write,
// keyed by the Idempotency-Key header, else its input.idempotencyKey; a
// keyed request holds exactly one mutation.
func httpKey(c *pipeline.Call) (string, bool, error) {
	g := c.Input.(*gqlCall)
	mutation, err := g.inspect(c.R.Header.Get("Idempotency-Key"))
	return g.key, mutation, err
}

// query runs a request that is no mutation, its answer streamed.
func (h *gqlHandler) query(c *pipeline.Call) error {
	g := c.Input.(*gqlCall)
	r := c.R
	if r.Method == http.MethodPost {
		r = requestWith(c.R, c.R.Context(), c.Body) // the body read by the Body step
	}
	h.srv.ServeHTTP(statusWriter{c.W, g.st}, r)
	return nil
}

// writeMutation writes a mutation's answer, stored or replayed. The status
// follows from the answer, replayed or not (a refusal by the rate limit
// excepted); the status stored only decides what is replayed.
func writeMutation(c *pipeline.Call, resp idem.Response, replayed bool) {
	w := c.W
	if resp.ContentType != "" {
		w.Header().Set("Content-Type", resp.ContentType)
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	w.WriteHeader(c.Input.(*gqlCall).st.apply(w.Header(), answerStatus(resp.ContentType, resp.Body)))
	_, _ = w.Write(resp.Body)
}
