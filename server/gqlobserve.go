package server

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"merchantpay/internal/metrics"
)

// observeOperation names a GraphQL request for the metrics by its operation
// (type and first root field: "graphql mutation withdraw", a set the schema
// bounds, unlike the operation names clients choose) and gives each query
// and mutation a span of its own under the request's.
type observeOperation struct{ tracer trace.Tracer }

func (observeOperation) ExtensionName() string                   { return "Observe" }
func (observeOperation) Validate(graphql.ExecutableSchema) error { return nil }

func (o observeOperation) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc == nil || oc.Operation == nil {
		return next(ctx)
	}
	route := operationRoute(oc.Operation)
	if overHTTP, _ := ctx.Value(overHTTPKey{}).(bool); overHTTP {
		// A WebSocket's operations outlive the upgrade request whose
		// labels their context carries: only HTTP requests are named.
		metrics.SetRoute(ctx, route)
	}
	if oc.Operation.Operation == ast.Subscription || !trace.SpanFromContext(ctx).IsRecording() {
		return next(ctx)
	}
	ctx, span := o.tracer.Start(ctx, route, trace.WithAttributes(
		attribute.String("graphql.operation.type", string(oc.Operation.Operation)),
		attribute.String("graphql.operation.name", oc.OperationName),
	))
	respond := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := respond(ctx)
		if resp != nil && len(resp.Errors) > 0 {
			span.SetStatus(codes.Error, resp.Errors[0].Message)
		}
		span.End()
		return resp
	}
}

// operationRoute is "graphql <type> <first root field>".
func operationRoute(op *ast.OperationDefinition) string {
	field := ""
	for _, sel := range op.SelectionSet {
		if f, ok := sel.(*ast.Field); ok {
			field = f.Name
			break
		}
	}
	if field == "" {
		return "graphql " + string(op.Operation)
	}
	return "graphql " + string(op.Operation) + " " + field
}
