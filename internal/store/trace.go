package store

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"merchantpay/ent"
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
	ctx, span := tr.span(ctx, name, attrs...)
	if span == nil {
		return ctx, func(error) {}
	}
	return ctx, func(err error) { finish(span, err) }
}

// span begins a span named name under the span in ctx, or returns a nil
// span (and ctx as it is) when that one does not record.
func (tr *tracer) span(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	if tr == nil || !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	attrs = append(attrs, attribute.String("db.system.name", tr.system))
	return (*tr.t.Load()).Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// finish ends span, marked failed when err is not nil.
func finish(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

// transaction begins a transaction with begin, under a span named
// "transaction" when the span in ctx records, whoever opens it (Within,
// Begin, Snapshot). The span ends when the transaction commits or rolls
// back, whichever comes first, with its outcome (transaction.outcome) and
// the commit's or rollback's error. The context returned carries the span:
// the transaction's statements are run with it, so that theirs are its
// children.
func (tr *tracer) transaction(ctx context.Context, begin func(context.Context) (*ent.Tx, error)) (context.Context, *ent.Tx, error) {
	tctx, span := tr.span(ctx, "transaction")
	if span == nil {
		tx, err := begin(ctx)
		return ctx, tx, err
	}
	tx, err := begin(tctx)
	if err != nil {
		finish(span, err)
		return ctx, nil, err
	}
	var once sync.Once
	end := func(outcome string, err error) {
		once.Do(func() {
			span.SetAttributes(attribute.String("transaction.outcome", outcome))
			finish(span, err)
		})
	}
	tx.OnCommit(func(next ent.Committer) ent.Committer {
		return ent.CommitFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Commit(ctx, tx)
			end("commit", err)
			return err
		})
	})
	tx.OnRollback(func(next ent.Rollbacker) ent.Rollbacker {
		return ent.RollbackFunc(func(ctx context.Context, tx *ent.Tx) error {
			err := next.Rollback(ctx, tx)
			end("rollback", err)
			return err
		})
	})
	return tctx, tx, nil
}

// failed marks the span of the transaction whose context is ctx (from
// transaction) as failed with err, the reason it is being rolled back.
func (tr *tracer) failed(ctx context.Context, err error) {
	if tr == nil {
		return
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, "")
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
