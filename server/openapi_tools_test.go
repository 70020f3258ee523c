package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"merchantpay/internal/nodetest"
	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// openapiTools installs the pinned tools of testdata/openapi (the Redocly
// linter, openapi-typescript, openapi-fetch, TypeScript) once per change of
// its lock, safely across parallel test processes, and returns the folder.
// The tests are skipped only where node or npm is missing.
func openapiTools(t *testing.T) string {
	t.Helper()
	return nodetest.Install(t, "openapi")
}

// run runs a command in dir and returns its stdout; it fails the test on a
// non-zero exit.
func run(t *testing.T, dir string, timeout time.Duration, name string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	// No telemetry or update check: the tools stay offline.
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_UPDATE_NOTIFIER=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\nstdout: %s\nstderr: %s", name, args, err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// TestOpenAPILint lints the document the service serves with Redocly's
// recommended rules: no error and no warning.
func TestOpenAPILint(t *testing.T) {
	dir := openapiTools(t)
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	doc := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(doc, e.Do(http.MethodGet, "/openapi.json", "", nil).Expect(200).Body, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "node_modules", "@redocly", "cli", "bin", "cli.js"),
		"lint", "--config", filepath.Join(dir, "redocly.yaml"), "--format", "json", doc)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var report struct {
		Totals   struct{ Errors, Warnings int }
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string
			Message  string
			Location []struct {
				Pointer string
			}
		}
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("redocly lint: %v (%v)\nstdout: %s\nstderr: %s", err, runErr, stdout.String(), stderr.String())
	}
	for _, p := range report.Problems {
		at := ""
		if len(p.Location) > 0 {
			at = p.Location[0].Pointer
		}
		t.Errorf("redocly %s %s at %s: %s", p.Severity, p.RuleID, at, p.Message)
	}
	if report.Totals.Errors+report.Totals.Warnings > 0 || runErr != nil {
		t.Errorf("redocly lint: %d errors, %d warnings (%v)", report.Totals.Errors, report.Totals.Warnings, runErr)
	}
}

// TestOpenAPIClient generates a TypeScript client from the served document
// with openapi-typescript, type-checks a merchant's flow written against it
// (testdata/openapi/flow.ts, through openapi-fetch), and runs it: wallet,
// account, sandbox bank transfer, withdrawal.
func TestOpenAPIClient(t *testing.T) {
	dir := openapiTools(t)
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	m := e.Merchant("Typed Client")
	work := t.TempDir()
	bin := func(parts ...string) string { return filepath.Join(append([]string{dir, "node_modules"}, parts...)...) }
	run(t, work, 2*time.Minute, "node", bin("openapi-typescript", "bin", "cli.js"), e.URL+"/openapi.json", "-o", filepath.Join(work, "schema.d.ts"))
	for _, name := range []string{"flow.ts", "tsconfig.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(work, "package.json"), []byte(`{"type":"module"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin(), filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	run(t, work, 2*time.Minute, "node", bin("typescript", "bin", "tsc"), "-p", work)
	out := run(t, work, time.Minute, "node", filepath.Join(work, "out", "flow.js"), e.URL, m.TestSecret)
	var got struct{ Wallet, Account, Deposit, Withdrawal, Refused string }
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("flow output %q: %v", out, err)
	}
	if got.Wallet != "ts-client-1" || len(got.Account) != 10 || got.Deposit == "" || got.Withdrawal == "" || got.Refused != "VALIDATION_ERROR" {
		t.Errorf("flow: %+v", got)
	}
	// What the flow did is what the service holds.
	tx := e.REST(http.MethodGet, "/transactions/"+got.Withdrawal, m.TestSecret, nil).Expect(200).Data()
	if tx["merchant_reference"] != "ts-payout-1" {
		t.Errorf("withdrawal %v", tx)
	}
}
