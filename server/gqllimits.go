package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/internal/apperr"
	"merchantpay/internal/merchants"
	"merchantpay/pipeline"
)

// operationLimits keeps one GraphQL operation from occupying the service:
// before it runs, its cost (see costWalk) against a limit, and the rate
// limit's tokens for that cost; while it runs, a time budget. (The cap on
// its answer's size is boundedExecutor's, for every answer.)
// Introspection-only operations are answered from a cache.
type operationLimits struct {
	h        *gqlHandler
	walk     *costWalk
	maxCost  int
	timeout  time.Duration
	maxBytes int
	cache    *lru.LRU[json.RawMessage]
}

// introspectionRuns counts introspection-only operations executed rather
// than answered from the cache.
var introspectionRuns atomic.Int64

func newOperationLimits(h *gqlHandler, s *ast.Schema, cfg Config) operationLimits {
	return operationLimits{h: h, walk: newCostWalk(s), maxCost: cfg.GraphQLMaxCost, timeout: cfg.GraphQLTimeout,
		maxBytes: cfg.GraphQLMaxResponseBytes, cache: lru.New[json.RawMessage](64)}
}

func (operationLimits) ExtensionName() string                   { return "OperationLimits" }
func (operationLimits) Validate(graphql.ExecutableSchema) error { return nil }

// MutateOperationContext refuses an operation over the cost limit and
// takes the rate limit's tokens for its cost: the first was taken when the
// request (or, over WebSocket, the operation) came in, the rest here.
func (l operationLimits) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	cost, introspection := l.walk.Cost(oc.Operation, oc.Variables)
	if introspection {
		if full := l.walk.FullCost(oc.Operation, oc.Variables); full > l.walk.maxIntrospection {
			return refusal(apperr.New(apperr.QueryTooComplex,
				"the introspection query could resolve about %d fields, over the limit of %d: it recurses too deep through field types", full, l.walk.maxIntrospection),
				map[string]any{"cost": full, "maxCost": l.walk.maxIntrospection})
		}
	}
	if cost > l.maxCost {
		return refusal(apperr.New(apperr.QueryTooComplex,
			"the operation costs %d points, over the limit of %d: ask for smaller pages (first), fewer nested lists or fewer aliases", cost, l.maxCost),
			map[string]any{"cost": cost, "maxCost": l.maxCost})
	}
	p, ok := merchants.PrincipalFrom(ctx)
	if extra := tokensFor(cost) - 1; extra > 0 && ok && l.h.pipe.Limiter != nil {
		if ok, retry := l.h.pipe.Limiter.AllowN(pipeline.LimiterKey(p), extra); !ok {
			if st, _ := ctx.Value(httpStatusKey{}).(*httpStatus); st != nil {
				st.set(http.StatusTooManyRequests, retry)
			}
			return refusal(apperr.New(apperr.RateLimited,
				"the operation costs %d points, %d tokens of this key's rate limit, more than it has left; retry after %d s", cost, extra+1, retry),
				map[string]any{"cost": cost, "retryAfter": retry})
		}
	}
	return nil
}

// refusal is an operation refused before it ran. Like a document that
// fails validation, it is answered over WebSocket with an error message
// for the operation, never a result followed by complete.
func refusal(e *apperr.Error, ext map[string]any) *gqlerror.Error {
	return invalid(&gqlerror.Error{Message: e.Message, Err: e, Extensions: ext})
}

// InterceptOperation answers an introspection-only operation from the
// cache when it can (an answer over the size cap, which boundedExecutor
// replaces, is not kept), and runs any other under the time budget.
func (l operationLimits) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil {
		return next(ctx)
	}
	if oc.Operation.Operation == ast.Subscription {
		return l.subscription(next(ctx))
	}
	var key string
	if introspectionOnly(oc.Operation.SelectionSet, 0) {
		vars, _ := json.Marshal(oc.Variables)
		key = oc.RawQuery + "\x00" + oc.OperationName + "\x00" + string(vars)
		if data, ok := l.cache.Get(ctx, key); ok {
			return graphql.OneShot(&graphql.Response{Data: data})
		}
		introspectionRuns.Add(1)
	}
	handler := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		budget, cancel := context.WithTimeout(ctx, l.timeout)
		defer cancel()
		resp := handler(budget)
		if budget.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return l.timedOut(ctx)
		}
		if resp == nil {
			return nil
		}
		if key != "" && len(resp.Errors) == 0 && resp.Data != nil && len(resp.Data) <= l.maxBytes {
			l.cache.Add(ctx, key, append(json.RawMessage(nil), resp.Data...))
		}
		return resp
	}
}

// subscription applies the time budget to each event: the
// budget starts when the event's first field is resolved (the wait for the
// event is the subscription's life, which has no budget).
func (l operationLimits) subscription(handler graphql.ResponseHandler) graphql.ResponseHandler {
	return func(ctx context.Context) *graphql.Response {
		b := &eventBudget{timeout: l.timeout}
		defer b.done()
		resp := handler(context.WithValue(ctx, eventBudgetKey{}, b))
		if resp == nil {
			return nil
		}
		if b.expired() && ctx.Err() == nil {
			return l.timedOut(ctx)
		}
		return resp
	}
}

func (l operationLimits) timedOut(ctx context.Context) *graphql.Response {
	return errorResponse(ctx, apperr.New(apperr.Timeout,
		"the operation ran out of its %s time budget and was stopped; ask for less (smaller pages, fewer fields) or retry later", l.timeout))
}

// errorResponse is an answer of one error and no data, presented (and so
// recorded, for a mutation to roll back) as every GraphQL error is.
func errorResponse(ctx context.Context, e *apperr.Error) *graphql.Response {
	return &graphql.Response{Errors: gqlerror.List{presentError(ctx, &gqlerror.Error{Message: e.Message, Err: e})}}
}

// InterceptField stops an operation out of time from looking anything more
// up, and gives the fields of a subscription's event their budget.
func (l operationLimits) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	if b, ok := ctx.Value(eventBudgetKey{}).(*eventBudget); ok {
		ctx = b.within(ctx)
	}
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.IsResolver && ctx.Err() == context.DeadlineExceeded {
		return nil, apperr.New(apperr.Timeout, "the operation ran out of its %s time budget", l.timeout)
	}
	return next(ctx)
}

// eventBudget is the time budget of one subscription event, started by the
// first of its fields.
type eventBudget struct {
	timeout time.Duration
	once    sync.Once
	ctx     context.Context
	cancel  context.CancelFunc
}

type eventBudgetKey struct{}

func (b *eventBudget) within(ctx context.Context) context.Context {
	b.once.Do(func() { b.ctx, b.cancel = context.WithTimeout(ctx, b.timeout) })
	return budgetContext{Context: ctx, budget: b.ctx}
}

// expired reports whether the event's budget ran out; an event with no
// field resolved started none.
func (b *eventBudget) expired() bool {
	b.once.Do(func() {})
	return b.ctx != nil && b.ctx.Err() == context.DeadlineExceeded
}

func (b *eventBudget) done() {
	b.once.Do(func() {})
	if b.cancel != nil {
		b.cancel()
	}
}

// budgetContext is a field's context (its values) that ends when the
// event's budget does, or when the budget's own parent, the event, ends.
type budgetContext struct {
	context.Context
	budget context.Context
}

func (c budgetContext) Deadline() (time.Time, bool) { return c.budget.Deadline() }
func (c budgetContext) Done() <-chan struct{}       { return c.budget.Done() }
func (c budgetContext) Err() error                  { return c.budget.Err() }

// httpStatus is the HTTP status (and Retry-After) an operation refused
// before it ran asks for, where GraphQL would answer 200: a POST over the
// rate limit answers 429 as any other request over it does.
type httpStatus struct {
	mu         sync.Mutex
	status     int
	retryAfter int
}

type httpStatusKey struct{}

func (s *httpStatus) set(status, retryAfter int) {
	s.mu.Lock()
	s.status, s.retryAfter = status, retryAfter
	s.mu.Unlock()
}

// apply sets Retry-After on h and returns the status to send instead of
// status.
func (s *httpStatus) apply(h http.Header, status int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status == 0 {
		return status
	}
	h.Set("Retry-After", strconv.Itoa(s.retryAfter))
	return s.status
}

// statusWriter sends the status an httpStatus asks for.
type statusWriter struct {
	http.ResponseWriter
	st *httpStatus
}

func (w statusWriter) WriteHeader(code int) {
	w.ResponseWriter.WriteHeader(w.st.apply(w.Header(), code))
}

func (w statusWriter) Write(p []byte) (int, error) {
	return w.ResponseWriter.Write(p)
}
