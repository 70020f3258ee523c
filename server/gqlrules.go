package server

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/internal/merchants"
	"merchantpay/pipeline"
)

// depthLimit refuses operations nested deeper than max. An
// introspection-only operation is exempt (GraphiQL's own nests its type
// references deeper): the cost walk bounds it instead.
type depthLimit struct{ max int }

func (depthLimit) ExtensionName() string                   { return "DepthLimit" }
func (depthLimit) Validate(graphql.ExecutableSchema) error { return nil }
func (d depthLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || introspectionOnly(oc.Operation.SelectionSet, 0) {
		return nil
	}
	if depth(oc.Operation.SelectionSet, 0) > d.max {
		return invalid(gqlerror.Errorf("the operation is nested more than %d levels deep", d.max))
	}
	return nil
}

// wsRateLimit applies the per-key rate limit to each query
// and subscription of a WebSocket connection, as every HTTP request and
// every WebSocket mutation already is: the operation is answered with an
// error message (RATE_LIMITED), as one refused by its other limits is, and
// the connection stays open.
type wsRateLimit struct{ h *gqlHandler }

func (wsRateLimit) ExtensionName() string                   { return "WebSocketRateLimit" }
func (wsRateLimit) Validate(graphql.ExecutableSchema) error { return nil }
func (l wsRateLimit) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if overHTTP, _ := ctx.Value(overHTTPKey{}).(bool); overHTTP || oc.Operation == nil || oc.Operation.Operation == ast.Mutation {
		return nil
	}
	p, ok := merchants.PrincipalFrom(ctx)
	if !ok {
		return nil
	}
	if err := l.h.pipe.Allow(p); err != nil {
		var re *pipeline.RetryError
		errors.As(err, &re)
		return invalid(&gqlerror.Error{Message: re.Err.Message, Err: re.Err})
	}
	return nil
}

// invalid marks err as a refusal before the operation runs, as
// gqlparser's validation failures are: a WebSocket transport answers it
// with an error message rather than a result.
func invalid(err *gqlerror.Error) *gqlerror.Error {
	errcode.Set(err, errcode.ValidationFailed)
	return err
}

// overHTTPKey marks the context of a GraphQL request made over plain HTTP.
type overHTTPKey struct{}

// subscriptionRules refuses a subscription over plain HTTP (it would hold
// the request open until the first event, then end: subscriptions are
// served over WebSocket) and one that selects more than one root field
// (GraphQL's "Single root field" rule, which gqlparser does not check;
// gqlgen's executor would refuse it with an error of its own that reads as
// the service's fault).
type subscriptionRules struct{}

func (subscriptionRules) ExtensionName() string                   { return "SubscriptionRules" }
func (subscriptionRules) Validate(graphql.ExecutableSchema) error { return nil }
func (subscriptionRules) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return nil
	}
	if http, _ := ctx.Value(overHTTPKey{}).(bool); http {
		return gqlerror.Errorf("subscriptions are served over WebSocket on this path (graphql-transport-ws or graphql-ws), not over plain HTTP")
	}
	if n := rootFields(oc.Operation.SelectionSet, 0); n != 1 {
		return invalid(gqlerror.Errorf("a subscription must select exactly one root field; this one selects %d", n))
	}
	return nil
}

// rootFields counts the fields of set, through its fragments.
func rootFields(set ast.SelectionSet, level int) int {
	n := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			n++
		case *ast.InlineFragment:
			if level < 16 {
				n += rootFields(s.SelectionSet, level+1)
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && level < 16 {
				n += rootFields(s.Definition.SelectionSet, level+1)
			}
		}
	}
	return n
}

func depth(set ast.SelectionSet, level int) int {
	if level > 64 {
		return level
	}
	best := level
	for _, sel := range set {
		var n int
		switch s := sel.(type) {
		case *ast.Field:
			n = depth(s.SelectionSet, level+1)
		case *ast.InlineFragment:
			n = depth(s.SelectionSet, level)
		case *ast.FragmentSpread:
			if s.Definition != nil {
				n = depth(s.Definition.SelectionSet, level)
			}
		}
		if n > best {
			best = n
		}
	}
	return best
}
