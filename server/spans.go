package server

import (
	"context"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// startSpan begins a request's server span, continuing the trace of an
// incoming W3C traceparent. With tracing off it returns a span that
// records nothing, at the cost of a context look-up.
func (a *App) startSpan(ctx context.Context, r *http.Request) (context.Context, trace.Span) {
	if !a.Tracing.On {
		return ctx, trace.SpanFromContext(ctx)
	}
	ctx = a.Tracing.Propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	return a.Tracing.Tracer().Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("http.request.method", r.Method),
			attribute.String("url.path", r.URL.Path),
			attribute.String("url.scheme", scheme(r)),
			attribute.String("user_agent.original", r.UserAgent()),
		))
}

// endSpan names the span by its route once the handler has found it (the
// semantic conventions' "METHOD route") and ends it.
func (a *App) endSpan(span trace.Span, route string, status int) {
	if !span.IsRecording() {
		return
	}
	if route == "" {
		route = "unmatched"
	}
	span.SetName(route)
	span.SetAttributes(attribute.String("http.route", route), attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, strconv.Itoa(status))
	}
	span.End()
}

// logAttrs are what every log line of a request carries: its id and, when
// it is traced, the trace and span ids.
func (a *App) logAttrs(id string, span trace.Span) []any {
	sc := span.SpanContext()
	if !sc.IsValid() {
		return []any{"request_id", id}
	}
	return []any{"request_id", id, "trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String()}
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// workerTracer is the tracer of the workers' spans, nil with tracing off so
// that they skip even the span's set-up.
func (a *App) workerTracer() trace.Tracer {
	if !a.Tracing.On {
		return nil
	}
	return a.Tracing.Tracer()
}
