package server

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// make run's demo merchant: created and printed on an empty database, its
// saved keys printed on later runs, and never once they were rolled.
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
	saved, err := os.ReadFile(filepath.Join(dir, "demo-merchant.json"))
	if err != nil {
		t.Fatalf("keys not saved beside the database: %v", err)
	}
	var keys struct {
		MerchantID    string `json:"merchant_id"`
		TestSecretKey string `json:"test_secret_key"`
	}
	if err := json.Unmarshal(saved, &keys); err != nil || keys.TestSecretKey == "" {
		t.Fatalf("saved keys %s: %v", saved, err)
	}
	if !strings.Contains(first, keys.TestSecretKey) || !strings.Contains(first, "X-API-KEY: "+keys.TestSecretKey) {
		t.Errorf("first run does not show the test secret key:\n%s", first)
	}
	if n, _ := app.Merchants.Count(ctx); n != 1 {
		t.Errorf("%d merchants after the first run", n)
	}
	if again := run(); !strings.Contains(again, keys.TestSecretKey) {
		t.Errorf("second run does not show the saved keys:\n%s", again)
	}
	if n, _ := app.Merchants.Count(ctx); n != 1 {
		t.Errorf("%d merchants after the second run", n)
	}
	if _, err := app.Merchants.RollKeys(ctx, keys.MerchantID, "test"); err != nil {
		t.Fatal(err)
	}
	rolled := run()
	if strings.Contains(rolled, keys.TestSecretKey) || !strings.Contains(rolled, "rolled") || !strings.Contains(rolled, keys.MerchantID) {
		t.Errorf("after roll-keys the run shows:\n%s", rolled)
	}
}
