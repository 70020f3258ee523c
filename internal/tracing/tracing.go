// Package tracing sets up OpenTelemetry traces: off unless an OTLP endpoint
// is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, with the other standard OTEL_*
// variables), exported over OTLP/HTTP with protobuf. Spans are batched and
// dropped, never waited for, when the exporter falls behind or its
// collector does not answer: tracing must not slow a payment.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Name is the instrumentation scope of the service's own spans.
const Name = "merchantpay"

// Tracing is the service's tracer provider and the propagator it reads
// incoming trace context with.
type Tracing struct {
	Provider trace.TracerProvider
	// Propagator reads W3C traceparent/tracestate from requests. It is never
	// used to write them into outgoing webhooks: merchants do not get our
	// trace ids.
	Propagator propagation.TextMapPropagator
	// On is whether spans are recorded and exported.
	On       bool
	shutdown func(context.Context) error
}

// Off is tracing switched off: a provider whose spans do nothing.
func Off() *Tracing {
	return &Tracing{Provider: noop.NewTracerProvider(), Propagator: propagation.TraceContext{},
		shutdown: func(context.Context) error { return nil }}
}

// Config is what the standard OTEL_* variables ask for.
type Config struct {
	// TracesURL is where spans go (OTLP/HTTP); empty turns tracing off.
	TracesURL   string
	ServiceName string
}

// ConfigFrom reads the standard variables: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// is the traces URL as it is, OTEL_EXPORTER_OTLP_ENDPOINT a base to which
// /v1/traces is added; OTEL_SDK_DISABLED=true turns tracing off;
// OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf if set. The exporter
// reads the rest (headers, timeout, compression, certificates) itself.
func ConfigFrom(getenv func(string) string) (Config, error) {
	c := Config{ServiceName: getenv("OTEL_SERVICE_NAME")}
	if c.ServiceName == "" {
		c.ServiceName = Name
	}
	if getenv("OTEL_SDK_DISABLED") == "true" {
		return c, nil
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := getenv(k); p != "" && p != "http/protobuf" {
			return c, fmt.Errorf("%s=%q: only http/protobuf is supported", k, p)
		}
	}
	if u := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); u != "" {
		c.TracesURL = u
	} else if u := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
		c.TracesURL = strings.TrimRight(u, "/") + "/v1/traces"
	}
	if c.TracesURL != "" {
		if u, err := url.Parse(c.TracesURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("the OTLP endpoint %q is not an http(s) URL", c.TracesURL)
		}
	}
	return c, nil
}

// Setup returns the tracing cfg asks for.
func Setup(ctx context.Context, cfg Config, log *slog.Logger) (*Tracing, error) {
	if cfg.TracesURL == "" {
		return Off(), nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.TracesURL))
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(cfg.ServiceName)))
	if err != nil && !errors.Is(err, resource.ErrPartialResource) && !errors.Is(err, resource.ErrSchemaURLConflict) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	// The batch processor's queue drops spans when full (it never blocks
	// the code that ends them); OTEL_BSP_* tune it.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	log.Info("tracing on: exporting spans over OTLP/HTTP", "service", cfg.ServiceName)
	return &Tracing{Provider: tp, Propagator: propagation.TraceContext{}, On: true, shutdown: tp.Shutdown}, nil
}

// Tracer is the service's tracer.
func (t *Tracing) Tracer() trace.Tracer { return t.Provider.Tracer(Name) }

// Shutdown flushes what spans it can within ctx and stops the exporter.
func (t *Tracing) Shutdown(ctx context.Context) error { return t.shutdown(ctx) }

// Parent is the W3C traceparent of the span in ctx, stored with work that a
// worker carries on later so its span can link back; "" when ctx has no
// recorded span.
func Parent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), sc), carrier)
	return carrier["traceparent"]
}

// Link is a link to the span a stored traceparent names (no link when it
// names none).
func Link(traceparent string) []trace.SpanStartOption {
	if traceparent == "" {
		return nil
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceparent})
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	return []trace.SpanStartOption{trace.WithLinks(trace.Link{SpanContext: sc})}
}

// ParentOf is Parent as a column value: nil when ctx has no recorded span.
func ParentOf(ctx context.Context) *string {
	if p := Parent(ctx); p != "" {
		return &p
	}
	return nil
}

// Flush exports the spans ended so far (tests, and a shutdown that wants
// them out) within ctx.
func (t *Tracing) Flush(ctx context.Context) error {
	if tp, ok := t.Provider.(*sdktrace.TracerProvider); ok {
		return tp.ForceFlush(ctx)
	}
	return nil
}
