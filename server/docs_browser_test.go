package server_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// TestDocsInBrowser loads /docs in headless Chromium with every other origin
// blocked: the reference renders the API's title and its operations from
// the service alone, with no request elsewhere and no CSP violation.
func TestDocsInBrowser(t *testing.T) {
	dir := browserDir(t)
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	shot := filepath.Join(t.TempDir(), "docs.png")
	out := runBrowser(t, dir, "docs.mjs", map[string]any{
		"url": e.URL + "/docs", "title": "merchantpay REST API", "operation": "Start a withdrawal", "screenshot": shot,
	})
	var got struct {
		Heading    string
		Operation  string
		Blocked    []string
		Violations []string
		Errors     []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("browser output %q: %v", out, err)
	}
	if !strings.HasPrefix(got.Heading, "merchantpay REST API") || got.Operation != "Start a withdrawal" {
		t.Errorf("the page shows heading %q and operation %q", got.Heading, got.Operation)
	}
	if len(got.Blocked) > 0 {
		t.Errorf("the page asked other origins for %v", got.Blocked)
	}
	if len(got.Violations) > 0 {
		t.Errorf("Content-Security-Policy violations: %v", got.Violations)
	}
	if len(got.Errors) > 0 {
		t.Errorf("errors in the page: %v", got.Errors)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() == 0 {
		t.Errorf("no screenshot: %v", err)
	}
}
