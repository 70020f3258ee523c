// Package nodetest installs the pinned Node clients of testdata/node (the
// reference graphql-ws client, standardwebhooks) for tests that check the
// service against code nobody here wrote. Tests are skipped only where node
// or npm is missing.
package nodetest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Dir installs the packages of testdata/node (npm ci, once; safe across
// parallel test processes) and returns the directory holding the scripts.
func Dir(t testing.TB) string { return Install(t, "node") }

// Install installs the pinned packages of testdata/<folder> from its
// package-lock.json, once per change of the lock, and returns the folder.
// The test is skipped only where node or npm is missing.
func Install(t testing.TB, folder string) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("node: %s is not installed", tool)
		}
	}
	dir := filepath.Join(moduleRoot(t), "testdata", folder)
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "merchantpay-npm-"+folder+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck
	stamp := filepath.Join(dir, "node_modules", ".installed")
	if lockInfo, err := os.Stat(filepath.Join(dir, "package-lock.json")); err == nil {
		if st, err := os.Stat(stamp); err == nil && st.ModTime().After(lockInfo.ModTime()) {
			return dir
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out.String())
	}
	if err := os.WriteFile(stamp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func moduleRoot(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("nodetest: go.mod not found above the test directory")
		}
		dir = parent
	}
}

// Run runs a script of Dir with stdin and returns its stdout; it fails the
// test with stderr on a non-zero exit.
func Run(t testing.TB, timeout time.Duration, stdin []byte, script string, args ...string) []byte {
	t.Helper()
	dir := Dir(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{script}, args...)...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", script, err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}
