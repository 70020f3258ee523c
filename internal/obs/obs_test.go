package obs

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
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
