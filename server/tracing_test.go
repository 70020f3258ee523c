package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"merchantpay/internal/testdb"
	"merchantpay/internal/tracing/otlptest"
	"merchantpay/server/servertest"
)

// An incoming request's trace, as a client that traces would send it.
const (
	clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpan  = "00f067aa0ba902b7"
)

// One withdrawal's trace, through an in-process OTLP/HTTP receiver: the
// request's server span continues the client's trace; its database
// transaction (and on PostgreSQL each statement) is a child of it; the
// payout worker's and the webhook delivery's spans link back to it. The
// webhook sent to the merchant carries no trace context, and the access
// log names the trace.
func TestTracesOfAWithdrawal(t *testing.T) {
	rcv := otlptest.New(t)
	var hookMu sync.Mutex
	var hookTraceparent []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hookMu.Lock()
		hookTraceparent = append(hookTraceparent, r.Header.Get("traceparent")+r.Header.Get("tracestate"))
		hookMu.Unlock()
	}))
	t.Cleanup(hook.Close)

	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Traced")
		e.REST(http.MethodPost, "/webhooks", m.TestSecret, map[string]any{"url": hook.URL + "/hook"}).Expect(201)
		fund(e, m.TestSecret, "NGN", 50000)
		parent := "00-" + clientTrace + "-" + clientSpan + "-01"
		wd := e.REST(http.MethodPost, "/transactions/withdraw", m.TestSecret, withdrawal("traced-"+e.Kind), "traceparent", parent).Expect(200)
		ref, _ := wd.Data()["reference"].(string)
		e.GQL(m.TestSecret, `{ me { id } }`, nil, "traceparent", parent).Expect(200)

		var spans []otlptest.Span
		byID := map[string]otlptest.Span{}
		linked := func(name string) bool {
			for _, s := range spans {
				if s.Name != name {
					continue
				}
				for _, l := range s.Links {
					if l.TraceID == clientTrace {
						return true
					}
				}
			}
			return false
		}
		servertest.Eventually(t, 20*time.Second, "the payout's and the delivery's spans", func() bool {
			_ = e.App.Tracing.Flush(context.Background())
			spans = rcv.Spans()
			return linked("payout") && linked("webhook delivery")
		})
		for _, s := range spans {
			byID[s.SpanID] = s
		}
		var server, gql otlptest.Span
		for _, s := range spans {
			switch {
			case s.Name == "POST /v1/merchant/public/transactions/withdraw" && s.ParentSpanID == clientSpan:
				server = s
			case s.Name == "graphql query me" && s.Kind != tracepb.Span_SPAN_KIND_SERVER:
				gql = s
			}
		}
		if server.SpanID == "" || server.TraceID != clientTrace || server.Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Fatalf("no server span of the withdrawal continuing the client's trace: %+v", server)
		}
		if server.Attrs["http.response.status_code"] != "200" {
			t.Errorf("server span attributes: %v", server.Attrs)
		}
		if p, ok := byID[gql.ParentSpanID]; gql.SpanID == "" || !ok || p.Kind != tracepb.Span_SPAN_KIND_SERVER || p.TraceID != clientTrace {
			t.Errorf("no GraphQL operation span under a server span: %+v (parent %+v)", gql, p)
		}
		// The transaction of the withdrawal, under its server span, and
		// its statements under it.
		var tx otlptest.Span
		for _, s := range spans {
			if s.Name == "transaction" && s.ParentSpanID == server.SpanID {
				tx = s
			}
		}
		if tx.SpanID == "" || tx.Attrs["db.system.name"] == "" {
			t.Fatalf("no database transaction span under the withdrawal's server span")
		}
		if e.Kind == testdb.Postgres {
			statements := 0
			for _, s := range spans {
				if s.ParentSpanID == tx.SpanID && s.Attrs["db.query.text"] != "" && s.Attrs["db.system.name"] == "postgresql" {
					statements++
				}
			}
			if statements == 0 {
				t.Error("no statement span under the withdrawal's transaction")
			}
		}
		hookMu.Lock()
		for _, h := range hookTraceparent {
			if h != "" {
				t.Errorf("a webhook carried trace context %q", h)
			}
		}
		hookMu.Unlock()
		found := false
		for _, l := range e.Logs.Lines() {
			if l["msg"] == "request" && l["path"] == "/v1/merchant/public/transactions/withdraw" && l["trace_id"] == clientTrace {
				found = true
			}
		}
		if !found {
			t.Error("the withdrawal's access-log line does not carry its trace_id")
		}
		if ref == "" {
			t.Errorf("withdrawal: %s", wd.Body)
		}
	}, servertest.With("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL), servertest.CaptureLogs(),
		servertest.With("LOG_LEVEL", "debug"))
}

// A collector that never answers slows no request: spans are batched and
// dropped, and the service still shuts down promptly.
func TestTracingCollectorDownSlowsNothing(t *testing.T) {
	rcv := otlptest.New(t)
	rcv.Stall()
	e := servertest.New(t, testdb.MigratedSQLiteURL(t), servertest.With("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL))
	m := e.Merchant("Untraced")
	start := time.Now()
	for i := 0; i < 50; i++ {
		e.REST(http.MethodGet, "/balances", m.TestSecret, nil).Expect(200)
	}
	// Generous: 50 reads take well under a second here; an exporter in
	// their way would take its 10 s timeout on the first.
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("50 requests took %s with the collector down", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = e.App.Tracing.Flush(ctx) // gives up with ctx
	start = time.Now()
	_ = e.App.Tracing.Shutdown(ctx)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown waited %s for a collector that does not answer", d)
	}
}

// A write sent with an idempotency key runs in a transaction of the
// idempotency store's making; it has the same database span as a keyless
// write: a committed "transaction" under the request's server span (and
// over the GraphQL operation's span), and on PostgreSQL its statements
// under it (the key's look-up among them). A refused write's transaction
// is a rollback without error status, with a key as without one.
func TestTracesOfKeyedWrites(t *testing.T) {
	rcv := otlptest.New(t)
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Keyed traces")
		fund(e, m.TestSecret, "NGN", 50000)
		// Each request its own trace, in each database's run.
		base, system := 0, "sqlite"
		if e.Kind == testdb.Postgres {
			base, system = 16, "postgresql"
		}
		traceOf := func(n int) (id, parent string) {
			id = fmt.Sprintf("%s%08x", clientTrace[:24], base+n)
			return id, "00-" + id + "-" + clientSpan + "-01"
		}
		wdTrace, wdParent := traceOf(1)
		e.REST(http.MethodPost, "/transactions/withdraw", m.TestSecret, withdrawal("keyed-trace-"+e.Kind),
			"traceparent", wdParent, "Idempotency-Key", "keyed-trace-wd").Expect(200)
		fundTrace, fundParent := traceOf(2)
		e.REST(http.MethodPost, "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "NGN", "amount": 100},
			"traceparent", fundParent, "Idempotency-Key", "keyed-trace-fund").Expect(200)
		gqlTrace, gqlParent := traceOf(3)
		r := e.GQL(m.TestSecret, `mutation Fund { fundBalance(input: {currency: "NGN", amount: "100", idempotencyKey: "keyed-trace-gql"}) { available } }`,
			nil, "traceparent", gqlParent).Expect(200)
		if r.JSON["errors"] != nil {
			t.Fatalf("fundBalance: %s", r.Body)
		}
		// The same refusal (more than the balance) with a key and without.
		tooMuch := func(ref string) map[string]any {
			w := withdrawal(ref)
			w["amount"] = 10_000_000
			return w
		}
		refusedTrace, refusedParent := traceOf(4)
		if r := e.REST(http.MethodPost, "/transactions/withdraw", m.TestSecret, tooMuch("keyed-refused-"+e.Kind),
			"traceparent", refusedParent, "Idempotency-Key", "keyed-trace-refused"); r.Code() != "INSUFFICIENT_BALANCE" {
			t.Fatalf("keyed refusal: %d %s", r.Status, r.Body)
		}
		keylessTrace, keylessParent := traceOf(5)
		if r := e.REST(http.MethodPost, "/transactions/withdraw", m.TestSecret, tooMuch("keyless-refused-"+e.Kind),
			"traceparent", keylessParent); r.Code() != "INSUFFICIENT_BALANCE" {
			t.Fatalf("keyless refusal: %d %s", r.Status, r.Body)
		}

		// The transaction span of each request's trace, below its server
		// span, with its outcome: a refusal the handler answered is rolled
		// back, keyed or not, and is no error either way.
		want := map[string]struct{ trace, server, outcome string }{
			"keyed withdrawal":  {wdTrace, "POST /v1/merchant/public/transactions/withdraw", "commit"},
			"keyed fund":        {fundTrace, "POST /v1/merchant/public/sandbox/balances/fund", "commit"},
			"keyed fundBalance": {gqlTrace, "graphql mutation fundBalance", "commit"},
			"keyed refusal":     {refusedTrace, "POST /v1/merchant/public/transactions/withdraw", "rollback"},
			"keyless refusal":   {keylessTrace, "POST /v1/merchant/public/transactions/withdraw", "rollback"},
		}
		var spans []otlptest.Span
		txs := map[string]otlptest.Span{}
		find := func() {
			byID := map[string]otlptest.Span{}
			for _, s := range spans {
				byID[s.SpanID] = s
			}
			for what, w := range want {
				for _, s := range spans {
					if s.TraceID != w.trace || s.Name != "transaction" || s.Attrs["transaction.outcome"] != w.outcome {
						continue
					}
					for p, ok := byID[s.ParentSpanID]; ok; p, ok = byID[p.ParentSpanID] {
						if p.Name == w.server && p.Kind == tracepb.Span_SPAN_KIND_SERVER {
							txs[what] = s
						}
					}
				}
			}
		}
		servertest.Eventually(t, 10*time.Second, "the keyed writes' transaction spans", func() bool {
			_ = e.App.Tracing.Flush(context.Background())
			spans = rcv.Spans()
			find()
			return len(txs) == len(want)
		})
		for what, tx := range txs {
			if tx.Attrs["db.system.name"] != system {
				t.Errorf("%s: transaction span attributes %v", what, tx.Attrs)
			}
			if tx.Status == tracepb.Status_STATUS_CODE_ERROR {
				t.Errorf("%s: its %s transaction span has error status", what, tx.Attrs["transaction.outcome"])
			}
		}
		// A mutation's GraphQL operation runs inside its transaction.
		op := false
		for _, s := range spans {
			op = op || s.Name == "graphql mutation fundBalance" && s.Kind != tracepb.Span_SPAN_KIND_SERVER &&
				s.ParentSpanID == txs["keyed fundBalance"].SpanID
		}
		if !op {
			t.Error("keyed fundBalance: no GraphQL operation span under its transaction")
		}
		if e.Kind != testdb.Postgres {
			return
		}
		for what, tx := range txs {
			if what == "keyless refusal" {
				continue // no key to look up
			}
			statements := 0
			for _, s := range spans {
				if s.ParentSpanID == tx.SpanID && s.Attrs["db.query.text"] != "" && s.Attrs["db.system.name"] == "postgresql" {
					statements++
				}
			}
			if statements < 2 {
				t.Errorf("%s: %d statement spans under its transaction, want the key's look-up and the write's", what, statements)
			}
		}
	}, servertest.With("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL))
}
