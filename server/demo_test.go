package server

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// make run's demo merchant: created on an empty database and its keys printed
// that once; they are stored only as hashes, so later runs print no key and
// say how to roll new ones.
func TestDemoMerchant(t *testing.T) {
	dir := t.TempDir()
	vars := map[string]string{"DATABASE_URL": "sqlite:" + filepath.Join(dir, "svc.db"), "LOG_LEVEL": "error"}
	cfg, err := LoadConfig(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	app, err := New(ctx, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	run := func() string {
		t.Helper()
		var out bytes.Buffer
		if err := app.demoMerchant(ctx, cfg, &out); err != nil {
			t.Fatalf("demo merchant: %v", err)
		}
		return out.String()
	}
	first := run()
	m, err := app.Merchants.ByEmail(ctx, demoEmail)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(first, "X-API-KEY: ")
	if i < 0 {
		t.Fatalf("first run shows no key to try:\n%s", first)
	}
	key := strings.Fields(first[i+len("X-API-KEY: "):])[0]
	key = strings.TrimSuffix(key, "'")
	if p, err := app.Merchants.Authenticate(ctx, key); err != nil || p.MerchantID != m.ID {
		t.Fatalf("the key shown (%q) does not authenticate as the demo merchant: %v", key, err)
	}
	for _, k := range []string{"test_secret_key", "test_public_key", "live_secret_key", "live_public_key"} {
		if !strings.Contains(first, k) {
			t.Errorf("first run does not show %s:\n%s", k, first)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if b, _ := os.ReadFile(filepath.Join(dir, e.Name())); bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the plain key", e.Name())
		}
	}
	again := run()
	if strings.Contains(again, "SECK_") || strings.Contains(again, "PUBK_") || !strings.Contains(again, "roll-keys --merchant "+m.ID) {
		t.Errorf("second run:\n%s", again)
	}
	if n, _ := app.Merchants.Count(ctx); n != 1 {
		t.Errorf("%d merchants after two runs", n)
	}
}
