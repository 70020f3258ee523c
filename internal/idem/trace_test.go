package idem_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"merchantpay/ent"
	"merchantpay/internal/clock"
	"merchantpay/internal/idem"
	"merchantpay/internal/testdb"
)

// A write's transaction that the handler asks not to commit is traced by
// one rule, with an idempotency key or without: a refusal answered below
// 500 is a rollback that is not marked failed; a 5xx answer or a panic is a
// rollback marked failed.
func TestRollbackSpansOneRule(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		db.SetTracer(tp.Tracer("test"))
		s := idem.New(db, clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
		panics := func(context.Context, *ent.Tx) (idem.Response, bool) { panic("handler broke") }
		calls := 0
		cases := []struct {
			name   string
			h      idem.Handler
			failed bool
		}{
			{"refused 422", answer(422, `{"e":1}`, false, &calls), false},
			{"error 500", answer(500, `{"e":2}`, false, &calls), true},
			{"panic", panics, true},
		}
		for _, c := range cases {
			for _, key := range []string{"", "trace-" + c.name} {
				rec.Reset()
				root, parent := tp.Tracer("test").Start(context.Background(), "request")
				func() {
					defer func() { _ = recover() }()
					req := idem.Request{Tenant: acme, Key: key, Hash: idem.HashRequest("POST", "/x", nil)}
					_, _, _ = s.Do(root, req, c.h)
				}()
				parent.End()
				var rollbacks []bool
				for _, sp := range rec.Ended() {
					if sp.Name() != "transaction" {
						continue
					}
					for _, a := range sp.Attributes() {
						if a.Key == "transaction.outcome" && a.Value.AsString() == "rollback" {
							rollbacks = append(rollbacks, sp.Status().Code.String() == "Error")
						}
					}
				}
				if len(rollbacks) != 1 || rollbacks[0] != c.failed {
					t.Errorf("%s, key %q: rolled back transaction spans marked failed %v, want [%v]", c.name, key, rollbacks, c.failed)
				}
			}
		}
	})
}
