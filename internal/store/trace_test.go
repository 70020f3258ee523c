package store_test

import (
	"context"
	"errors"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"merchantpay/ent"
	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
)

// Every transaction has one "transaction" span under the caller's, whoever
// opens it (Within, Begin, Snapshot), ended once at its commit or rollback
// with which of the two it was; a rollback for an error or a panic is
// marked failed, one the function chose (ErrRollback) is not.
func TestTransactionSpans(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		db.SetTracer(tp.Tracer("test"))
		root, parent := tp.Tracer("test").Start(context.Background(), "request")

		_ = db.Within(root, nil, func(context.Context, *ent.Tx) error { return nil })
		boom := errors.New("refused")
		_ = db.Within(root, nil, func(context.Context, *ent.Tx) error { return boom })
		ctx, tx, err := db.Begin(root)
		if err != nil {
			t.Fatal(err)
		}
		if trace.SpanFromContext(ctx).SpanContext().SpanID() == parent.SpanContext().SpanID() {
			t.Error("Begin's context carries the caller's span, not the transaction's")
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		_ = tx.Rollback() // after the commit: ends nothing more
		_, tx, err = db.Begin(root)
		if err != nil {
			t.Fatal(err)
		}
		_ = tx.Rollback()
		_ = db.Snapshot(root, func(context.Context, *ent.Tx) error { return nil })
		// A rollback fn chooses is no failure; a panic is one, and its
		// transaction still ends.
		if err := db.Within(root, nil, func(context.Context, *ent.Tx) error { return store.ErrRollback }); !errors.Is(err, store.ErrRollback) {
			t.Errorf("Within returned %v for ErrRollback", err)
		}
		func() {
			defer func() { _ = recover() }()
			_ = db.Within(root, nil, func(context.Context, *ent.Tx) error { panic("broke") })
		}()
		parent.End()

		type got struct {
			outcome string
			failed  bool
		}
		var spans []got
		for _, s := range rec.Ended() {
			if s.Name() != "transaction" {
				continue
			}
			if s.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("a transaction span not under the caller's span")
			}
			g := got{failed: s.Status().Code.String() == "Error"}
			for _, a := range s.Attributes() {
				if a.Key == "transaction.outcome" {
					g.outcome = a.Value.AsString()
				}
			}
			spans = append(spans, g)
		}
		want := []got{{"commit", false}, {"rollback", true}, {"commit", false}, {"rollback", false}, {"rollback", false},
			{"rollback", false}, {"rollback", true}}
		if len(spans) != len(want) {
			t.Fatalf("transaction spans %+v, want %+v", spans, want)
		}
		for i := range want {
			if spans[i] != want[i] {
				t.Errorf("transaction span %d: %+v, want %+v", i, spans[i], want[i])
			}
		}
	})
}
