package dashboard

import (
	"bytes"
	"context"
	"net/http/httptest"
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

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"gzip":           true,
		"br, gzip;q=0.5": true,
		"GZIP":           true,
		"gzip;q=0":       false,
		"gzip; q=0, br":  false,
		"identity":       false,
		"":               false,
		"x-gzip-not, br": false,
	} {
		r := httptest.NewRequest("GET", "/dashboard/index.js", nil)
		if header != "" {
			r.Header.Set("Accept-Encoding", header)
		}
		if got := acceptsGzip(r); got != want {
			t.Errorf("Accept-Encoding %q: %v, want %v", header, got, want)
		}
	}
}
