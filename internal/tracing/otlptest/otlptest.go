// Package otlptest is an in-process OTLP/HTTP trace receiver for tests: it
// decodes what the service's exporter sends (protobuf) and keeps the spans,
// or, switched to Stall, never answers, as a collector that hangs would.
package otlptest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, with ids in hex.
type Span struct {
	Name         string
	TraceID      string
	SpanID       string
	ParentSpanID string
	Kind         tracepb.Span_SpanKind
	Status       tracepb.Status_StatusCode // unset unless the span set one
	Attrs        map[string]string
	// Links are the span ids (with their trace ids) the span links to.
	Links []Link
}

// Link is a span link.
type Link struct{ TraceID, SpanID string }

// Receiver is a running receiver.
type Receiver struct {
	URL string // the traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT

	mu    sync.Mutex
	spans []Span
	stall chan struct{} // non-nil: requests wait on it
}

// New starts a receiver, closed when the test ends.
func New(t testing.TB) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(func() {
		r.mu.Lock()
		if r.stall != nil {
			close(r.stall)
			r.stall = nil
		}
		r.mu.Unlock()
		srv.Close()
	})
	r.URL = srv.URL + "/v1/traces"
	return r
}

// Stall makes the receiver hold every request without answering until the
// test ends.
func (r *Receiver) Stall() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stall == nil {
		r.stall = make(chan struct{})
	}
}

// Spans returns what was received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	stall := r.stall
	r.mu.Unlock()
	if stall != nil {
		select {
		case <-stall:
		case <-req.Context().Done():
		}
		return
	}
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want POST /v1/traces with application/x-protobuf", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return
	}
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range msg.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{Name: s.Name, TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
					ParentSpanID: hex.EncodeToString(s.ParentSpanId), Kind: s.Kind, Attrs: map[string]string{}}
				sp.Status = s.GetStatus().GetCode()
				for _, a := range s.Attributes {
					sp.Attrs[a.Key] = attrString(a.Value)
				}
				for _, l := range s.Links {
					sp.Links = append(sp.Links, Link{TraceID: hex.EncodeToString(l.TraceId), SpanID: hex.EncodeToString(l.SpanId)})
				}
				got = append(got, sp)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func attrString(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	default:
		return ""
	}
}
