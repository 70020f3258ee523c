package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/graph"
	"merchantpay/internal/apperr"
	"merchantpay/internal/idem"
	"merchantpay/internal/merchants"
	"merchantpay/internal/metrics"
	"merchantpay/internal/obs"
	"merchantpay/internal/store"
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

// wsInit authenticates a WebSocket connection by its connection_init payload
// unless the upgrade request's headers already did. Either way spends one
// of the key's rate-limit tokens, or a client could authenticate sockets
// without end where it may not send requests.
func (h *gqlHandler) wsInit(ctx context.Context, payload map[string]any) (context.Context, error) {
	if _, ok := merchants.PrincipalFrom(ctx); ok {
		return ctx, nil
	}
	hdr := http.Header{}
	for k, v := range payload {
		if s, ok := v.(string); ok {
			hdr.Set(k, s)
		}
	}
	p, err := rest.Authenticate(ctx, h.app.Merchants, hdr)
	if err == nil && p.Kind != merchants.Secret {
		err = apperr.New(apperr.Forbidden, "subscriptions need a secret key")
	}
	if err != nil {
		return ctx, &gqlws.CloseError{Code: gqlws.CodeForbidden, Reason: "Forbidden: " + apperr.As(err).Message}
	}
	if err := h.allow(p); err != nil {
		return ctx, &gqlws.CloseError{Code: gqlws.CodeTooManyRequests, Reason: "Too many requests: " + apperr.As(err).Message}
	}
	return withPrincipal(ctx, p), nil
}

// keyRolled closes a WebSocket connection whose API key no longer
// authenticates (rolled): CONTRACT 1 voids it at once, open connections
// included.
var keyRolled = &gqlws.CloseError{Code: gqlws.CodeUnauthorized, Reason: "Unauthorized: the API key was rolled or revoked"}

// wsAuthorize checks, before each operation of a WebSocket connection,
// that the key it was opened with still authenticates. A failed check
// lets the operation run: its own statements meet the same database.
func (h *gqlHandler) wsAuthorize(ctx context.Context) error {
	p, ok := merchants.PrincipalFrom(ctx)
	if !ok || p.KeyHash == "" {
		return nil
	}
	live, err := h.app.Merchants.KeysLive(ctx, []string{p.KeyHash})
	if err != nil {
		obs.Log(ctx).Warn("checking a WebSocket connection's key failed", "err", err)
		return nil
	}
	if !live[p.KeyHash] {
		return keyRolled
	}
	return nil
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

// mutate runs the mutation request r (its body: body) in one database
// transaction with its idempotency record, exactly as a REST POST runs.
func (h *gqlHandler) mutate(ctx context.Context, r *http.Request, p merchants.Principal, key string, body []byte) (idem.Response, bool, error) {
	return h.app.Idem.Do(ctx, idem.Request{
		Tenant: p.Tenant(), Key: key, Hash: idem.HashRequest(r.Method, r.URL.Path, body),
	}, func(ctx context.Context) (idem.Response, bool) {
		out := &outcome{}
		rec := newBuffer()
		h.srv.ServeHTTP(rec, requestWith(r, context.WithValue(ctx, outcomeKey{}, out), body))
		status := rec.status
		if s := out.worst(); s > status {
			status = s
		}
		ok := rec.status == http.StatusOK && !out.failed()
		return idem.Response{Status: status, Body: rec.buf.Bytes(), ContentType: rec.Header().Get("Content-Type")}, ok
	})
}

// wsMutation is the WebSocket transport's Mutation hook: a mutation sent
// over a connection runs as POST /graphql runs one (rate limit, one
// database transaction, idempotency by its input's idempotencyKey, there
// being no per-message headers), and its answer, replays included, is the
// body POST /graphql would send. Queries and subscriptions stay with the
// executor.
func (h *gqlHandler) wsMutation(ctx context.Context, payload json.RawMessage) (func() json.RawMessage, bool) {
	params, perr := decodeParams(payload)
	if perr != nil {
		return nil, false // the executor answers malformed requests itself
	}
	key, mutation, err := inspect(params, "")
	if !mutation {
		return nil, false
	}
	run := func() ([]byte, error) {
		if err != nil {
			return nil, err
		}
		p, ok := merchants.PrincipalFrom(ctx)
		if !ok {
			return nil, apperr.New(apperr.Unauthorized, "the connection is not authenticated")
		}
		if err := h.allow(p); err != nil {
			return nil, err
		}
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, "/graphql", nil)
		if err != nil {
			return nil, err
		}
		resp, _, err := h.mutate(ctx, r, p, key, payload)
		return resp.Body, err
	}
	return func() json.RawMessage {
		body, err := run()
		if err != nil {
			body, _ = json.Marshal(failure(ctx, err))
		}
		return body
	}, true
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

func requestWith(r *http.Request, ctx context.Context, body []byte) *http.Request {
	r2 := r.WithContext(ctx)
	r2.Body = ioNopCloser{bytes.NewReader(body)}
	r2.ContentLength = int64(len(body))
	r2.Header.Set("Content-Type", "application/json")
	return r2
}

type ioNopCloser struct{ *bytes.Reader }

func (ioNopCloser) Close() error { return nil }

// inspect finds whether the request is a mutation and its idempotency key
// (the header, else the mutation's input.idempotencyKey).
func inspect(req *graphql.RawParams, header string) (key string, mutation bool, err error) {
	doc, op := operationOf(req)
	if op == nil || op.Operation != ast.Mutation {
		return "", false, nil
	}
	key = header
	fields := 0
	// The operation's top-level fields, those of its fragments included.
	var walk func(ast.SelectionSet, int)
	walk = func(set ast.SelectionSet, depth int) {
		if depth > 10 {
			fields += 2 // fragments nested this deep: refused with a key
			return
		}
		for _, sel := range set {
			switch sel := sel.(type) {
			case *ast.Field:
				fields++
				if key == "" {
					key = inputKey(sel, req.Variables)
				}
			case *ast.InlineFragment:
				walk(sel.SelectionSet, depth+1)
			case *ast.FragmentSpread:
				if f := doc.Fragments.ForName(sel.Name); f != nil {
					walk(f.SelectionSet, depth+1)
				}
			}
		}
	}
	walk(op.SelectionSet, 0)
	if key != "" && fields > 1 {
		return "", true, apperr.New(apperr.Validation, "an idempotent request holds exactly one mutation")
	}
	return key, true, nil
}

func inputKey(f *ast.Field, vars map[string]any) string {
	arg := f.Arguments.ForName("input")
	if arg == nil || arg.Value == nil {
		return ""
	}
	v := arg.Value
	if v.Kind == ast.Variable {
		m, _ := vars[v.Raw].(map[string]any)
		s, _ := m["idempotencyKey"].(string)
		return s
	}
	for _, child := range v.Children {
		if child.Name != "idempotencyKey" || child.Value == nil {
			continue
		}
		if child.Value.Kind == ast.Variable {
			s, _ := vars[child.Value.Raw].(string)
			return s
		}
		if child.Value.Kind == ast.StringValue || child.Value.Kind == ast.BlockValue {
			return child.Value.Raw
		}
	}
	return ""
}

// outcome records the errors of one GraphQL execution, so a mutation with
// errors rolls back.
type outcome struct {
	mu     sync.Mutex
	status int
}

type outcomeKey struct{}

func (o *outcome) add(status int) {
	o.mu.Lock()
	if status > o.status {
		o.status = status
	}
	o.mu.Unlock()
}

func (o *outcome) worst() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status
}

func (o *outcome) failed() bool { return o.worst() > 0 }

// presentError maps error kinds to extensions.code (apperr's table), naming bad
// fields, and never leaks internals.
func presentError(ctx context.Context, err error) *gqlerror.Error {
	gerr := graphql.DefaultErrorPresenter(ctx, err)
	err = store.Classify(err)
	var ae *apperr.Error
	var kind apperr.Kind
	enumMsg := enumRefusal(err)
	switch {
	case errors.As(err, &ae):
		kind = ae.Kind
		gerr.Message = ae.Message
		if len(ae.Fields) > 0 {
			fields := make([]apperr.FieldError, len(ae.Fields))
			for i, fe := range ae.Fields {
				fields[i] = apperr.FieldError{Field: graphQLName(fe.Field), Message: fe.Message}
			}
			setExt(gerr, "errors", fields)
		} else if kind == apperr.Validation && len(gerr.Path) > 1 {
			// A scalar's refusal (a Decimal that is not a number): the
			// field is the argument's path below the operation's field.
			setExt(gerr, "errors", []apperr.FieldError{{Field: argPath(gerr.Path[1:]), Message: ae.Message}})
		}
	case enumMsg != "":
		// gqlparser lets a variable's enum value through whatever its case
		// ("success"); gqlgen's generated code then refuses it with a plain
		// error. It is the client's mistake all the same.
		kind = apperr.Validation
		if len(gerr.Path) > 1 {
			setExt(gerr, "errors", []apperr.FieldError{{Field: argPath(gerr.Path[1:]), Message: enumMsg}})
		}
	case isGraphQLUserError(err, gerr):
		kind = apperr.Validation
		if code, _ := gerr.Extensions["code"].(string); code == "GRAPHQL_PARSE_FAILED" {
			kind = apperr.BadRequest
		} else if field := variableField(gerr.Path); field != "" {
			// A variable's value that does not fit its type (a required
			// input field left out, a string for an Int) names the field
			// as a refusal by the operation would.
			setExt(gerr, "errors", []apperr.FieldError{{Field: field, Message: gerr.Message}})
		}
	default:
		kind = apperr.Internal
		obs.Log(ctx).Log(ctx, obs.FailureLevel(ctx), "graphql resolver failed", "err", err, "path", gerr.Path.String())
	}
	if kind == apperr.Internal {
		gerr.Message = "internal error; quote request id " + obs.RequestID(ctx) + " to support"
	}
	setExt(gerr, "code", string(kind))
	if out, ok := ctx.Value(outcomeKey{}).(*outcome); ok {
		out.add(kind.Status())
	}
	if overHTTP, _ := ctx.Value(overHTTPKey{}).(bool); overHTTP {
		metrics.SetCode(ctx, string(kind))
	}
	return gerr
}

// graphQLName is a field name of the services' errors (REST's
// snake_case: "beneficiary.account_name", "documents[0].document_type") as
// GraphQL names the input field: "beneficiary.accountName".
func graphQLName(field string) string {
	if !strings.Contains(field, "_") {
		return field
	}
	var b strings.Builder
	upper := false
	for i := 0; i < len(field); i++ {
		switch c := field[i]; {
		case c == '_' && i > 0 && i+1 < len(field) && field[i-1] != '.' && field[i+1] != '.':
			upper = true
		case upper && c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			upper = false
		default:
			b.WriteByte(c)
			upper = false
		}
	}
	return b.String()
}

// argPath writes an argument's path as the services' errors name fields,
// the mutation's input object left out: "amount", "items[0].amount".
func argPath(p ast.Path) string {
	if len(p) > 1 {
		if name, ok := p[0].(ast.PathName); ok && name == "input" {
			p = p[1:]
		}
	}
	var b strings.Builder
	for _, el := range p {
		switch el := el.(type) {
		case ast.PathIndex:
			b.WriteString("[" + strconv.Itoa(int(el)) + "]")
		case ast.PathName:
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(string(el))
		}
	}
	return b.String()
}

// enumValues are the values of each enum of the schema, by enum name.
var enumValues = func() map[string][]string {
	out := map[string][]string{}
	for name, def := range graph.NewExecutableSchema(graph.Config{}).Schema().Types {
		if def.Kind == ast.Enum {
			for _, v := range def.EnumValues {
				out[name] = append(out[name], v.Name)
			}
		}
	}
	return out
}()

// enumRefusal is what to tell the client when err is gqlgen's refusal of a
// value of one of the schema's enums ("success is not a valid
// TransactionStatus"), and "" for any other error.
func enumRefusal(err error) string {
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	const mark = " is not a valid "
	msg := err.Error()
	i := strings.LastIndex(msg, mark)
	if i < 0 {
		return ""
	}
	values, ok := enumValues[msg[i+len(mark):]]
	if !ok {
		return ""
	}
	return "must be one of " + strings.Join(values, ", ") + " (enum values are case-sensitive)"
}

// isGraphQLUserError tells gqlgen's own errors (parsing, validation, input
// coercion) from failures inside resolvers.
func isGraphQLUserError(err error, gerr *gqlerror.Error) bool {
	if code, _ := gerr.Extensions["code"].(string); code != "" {
		return true
	}
	var ge *gqlerror.Error
	if errors.As(err, &ge) && ge.Err == nil {
		return true
	}
	return false
}

func setExt(e *gqlerror.Error, k string, v any) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions[k] = v
}

// gqlFail answers a request refused before execution in GraphQL's error
// shape, with the HTTP status of its kind, in the media type its Accept
// header asks for (application/graphql-response+json: without data).
func gqlFail(w http.ResponseWriter, r *http.Request, err error) {
	metrics.SetCode(r.Context(), string(apperr.As(err).Kind))
	var re *retryError
	if errors.As(err, &re) {
		w.Header().Set("Retry-After", strconv.Itoa(re.after))
	}
	media := negotiate(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", media)
	status := apperr.As(err).Kind.Status()
	rest.SetRetryAfter(w.Header(), status)
	w.WriteHeader(status)
	answer := failure(r.Context(), err)
	if media == mediaGraphQLResponse {
		delete(answer, "data")
	}
	_ = json.NewEncoder(w).Encode(answer)
}

// failure is the GraphQL answer to a request refused before execution.
func failure(ctx context.Context, err error) map[string]any {
	e := apperr.As(err) // a retryError unwraps to its *apperr.Error
	msg := e.Message
	if e.Kind == apperr.Internal {
		obs.Log(ctx).Log(ctx, obs.FailureLevel(ctx), "graphql request failed", "err", err)
		msg = "internal error; quote request id " + obs.RequestID(ctx) + " to support"
	}
	ext := map[string]any{"code": e.Kind}
	if len(e.Fields) > 0 {
		ext["errors"] = e.Fields
	}
	return map[string]any{
		"errors": []map[string]any{{"message": msg, "extensions": ext}},
		"data":   nil,
	}
}

func originChecker(allowed []string) func(r *http.Request) bool {
	return func(r *http.Request) bool {
		if len(allowed) == 0 {
			return true
		}
		origin := r.Header.Get("Origin")
		if origin == "" {
			return true // not a browser
		}
		for _, a := range allowed {
			if a == "*" || strings.EqualFold(a, origin) {
				return true
			}
		}
		return false
	}
}

// buffer captures gqlgen's answer so it can be stored for replay.
type buffer struct {
	header http.Header
	status int
	buf    bytes.Buffer
}

func newBuffer() *buffer { return &buffer{header: http.Header{}} }

func (b *buffer) Header() http.Header { return b.header }
func (b *buffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.buf.Write(p)
}
func (b *buffer) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

// variableField is the field a refusal of a variable's value is about, as
// the services' errors name it: the path below "variable" ("variable",
// "input", "beneficiary", "bank" is "beneficiary.bank"); "" for an error
// about no variable.
func variableField(p ast.Path) string {
	if len(p) < 2 {
		return ""
	}
	if name, ok := p[0].(ast.PathName); !ok || name != "variable" {
		return ""
	}
	return argPath(p[1:])
}
