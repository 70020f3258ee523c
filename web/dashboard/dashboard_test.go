package dashboard

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"
)

// TestScripts runs the page's own JavaScript unit tests (src/*.test.js)
// with Node's test runner; skipped only where node is missing.
func TestScripts(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--test", "src/")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("node --test: %v\n%s", err, out.String())
	}
}
