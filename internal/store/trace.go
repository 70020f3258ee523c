package store

import (
	"context"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// tracer holds the tracer of a DB's spans: one per transaction (Tx) and, on
// PostgreSQL, one per statement. Spans are made only under a span that
// records (a traced request or worker), so with tracing off a statement
// costs one atomic load and one interface call.
type tracer struct {
	t      atomic.Pointer[trace.Tracer]
	system string // db.system.name
}

func newTracer(system string) *tracer {
	tr := &tracer{system: system}
	var t trace.Tracer = noop.NewTracerProvider().Tracer("")
	tr.t.Store(&t)
	return tr
}

// SetTracer makes db record its spans with t.
func (db *DB) SetTracer(t trace.Tracer) { db.tr.t.Store(&t) }

// start begins a span named name under the span in ctx, if that one
// records; end must be called with the outcome.
func (tr *tracer) start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, func(error)) {
	if tr == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, func(error) {}
	}
	attrs = append(attrs, attribute.String("db.system.name", tr.system))
	ctx, span := (*tr.t.Load()).Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "")
		}
		span.End()
	}
}

// statement starts the span of one statement: named by its operation (the
// statement's first word) as the semantic conventions ask, with its text
// (parameterised: values never appear in it).
func (tr *tracer) statement(ctx context.Context, query string) (context.Context, func(error)) {
	if tr == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, func(error) {}
	}
	op := operation(query)
	return tr.start(ctx, op, attribute.String("db.operation.name", op), attribute.String("db.query.text", query))
}

// operation is the first SQL keyword of query, past comments and a WITH
// clause's name ("WITH x AS (...) INSERT" is named WITH).
func operation(query string) string {
	q := strings.TrimSpace(query)
	for strings.HasPrefix(q, "/*") {
		end := strings.Index(q, "*/")
		if end < 0 {
			break
		}
		q = strings.TrimSpace(q[end+2:])
	}
	if i := strings.IndexAny(q, " \t\n("); i > 0 {
		q = q[:i]
	}
	if q == "" {
		return "SQL"
	}
	return strings.ToUpper(q)
}
