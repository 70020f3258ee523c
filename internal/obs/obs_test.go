package obs

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestWith: attributes added by With, in order, reach every line logged
// under the context, and not the lines of the parent context.
func TestWith(t *testing.T) {
	var buf bytes.Buffer
	base := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{}))
	ctx := With(WithLogger(WithRequestID(context.Background(), "req-1"), base), "request_id", "req-1")
	inner := With(ctx, "merchant", "m1", "mode", "test")
	Log(inner).Info("inner", "k", 1)
	Log(ctx).Info("outer")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.HasSuffix(lines[0], "msg=inner request_id=req-1 merchant=m1 mode=test k=1") ||
		!strings.HasSuffix(lines[1], "msg=outer request_id=req-1") {
		t.Fatalf("lines:\n%s", buf.String())
	}
	if RequestID(inner) != "req-1" || Log(context.Background()) != slog.Default() {
		t.Fatal("request id or default logger")
	}
}

// A request is abandoned when its context was cancelled without a cause
// (net/http's doing when the client leaves), not when its deadline passed
// or the server cut it short with a cause of its own.
func TestAbandoned(t *testing.T) {
	live, stop := context.WithCancel(context.Background())
	defer stop()
	left, leave := context.WithCancel(context.Background())
	leave()
	late, cancelLate := context.WithTimeout(context.Background(), -1)
	defer cancelLate()
	cut, cutShort := context.WithCancelCause(context.Background())
	cutShort(errors.New("shutting down"))
	inner, cancelInner := context.WithTimeout(left, time.Hour) // a handler's deadline under a client who left
	defer cancelInner()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want bool
	}{{"live", live, false}, {"client left", left, true}, {"deadline", late, false}, {"shutdown", cut, false}, {"under a deadline", inner, true}} {
		if got := Abandoned(tc.ctx); got != tc.want {
			t.Errorf("%s: Abandoned %v, want %v", tc.name, got, tc.want)
		}
		want := slog.LevelError
		if tc.want {
			want = slog.LevelDebug
		}
		if got := FailureLevel(tc.ctx); got != want {
			t.Errorf("%s: FailureLevel %v, want %v", tc.name, got, want)
		}
	}
}
