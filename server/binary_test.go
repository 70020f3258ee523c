package server_test

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"merchantpay/server/servertest"
)

// buildServer builds bin/server the way `make build` does.
func buildServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("short: skips building the binary")
	}
	bin := filepath.Join(t.TempDir(), "server")
	cmd := exec.Command("go", "build", "-o", bin, "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// staticBinary fails the test unless bin is statically linked: no
// dynamic loader named in its program headers.
func staticBinary(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked (it names a loader)", bin)
		}
	}
}

// runWithin runs cmd and waits at most d for it to exit.
func runWithin(cmd *exec.Cmd, d time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		_ = cmd.Process.Kill()
		<-done
		return nil // still running: it started
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// The binary: the merchant CLI prints JSON, the service serves with those
// keys, and SIGTERM drains and exits 0.
func TestBinaryCLIAndGracefulShutdown(t *testing.T) {
	bin := buildServer(t)
	staticBinary(t, bin)
	dir := t.TempDir()
	addr, admin := freePort(t), freePort(t)
	env := append(os.Environ(), "DATABASE_URL=sqlite:"+filepath.Join(dir, "svc.db"), "LISTEN_ADDR="+addr, "LOG_LEVEL=info",
		"ADMIN_ADDR="+admin)

	run := func(args ...string) map[string]any {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		var out map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("%v printed %q: %v", args, stdout.String(), err)
		}
		return out
	}
	created := run("merchant", "create", "--name", "Binary Co", "--email", "ops@binary.example")
	for _, k := range []string{"merchant_id", "test_secret_key", "test_public_key", "live_secret_key", "live_public_key"} {
		if s, _ := created[k].(string); s == "" {
			t.Fatalf("merchant create: no %s in %v", k, created)
		}
	}
	if !strings.HasPrefix(created["test_secret_key"].(string), "SECK_TEST_") || !strings.HasPrefix(created["live_public_key"].(string), "PUBK_LIVE_") {
		t.Errorf("key shapes: %v", created)
	}
	rolled := run("merchant", "roll-keys", "--merchant", created["merchant_id"].(string), "--mode", "test")
	if rolled["mode"] != "test" || rolled["merchant_id"] != created["merchant_id"] || !strings.HasPrefix(rolled["secret_key"].(string), "SECK_TEST_") {
		t.Errorf("roll-keys: %v", rolled)
	}

	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill() //nolint:errcheck
	base := "http://" + addr
	servertest.Eventually(t, 20*time.Second, "the service to listen", func() bool {
		res, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	res, err := http.Get(base + "/readyz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("readyz: %v %v", err, res)
	}
	res.Body.Close()
	req, _ := http.NewRequest("GET", base+"/v1/merchant/public/wallets", nil)
	req.Header.Set("X-API-KEY", rolled["secret_key"].(string))
	res, err = http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("GET /wallets with the rolled key: %v %v", err, res)
	}
	res.Body.Close()

	// The admin listener has the metrics and profiles; the public one not.
	for _, c := range []struct {
		url  string
		want int
	}{
		{"http://" + admin + "/metrics", 200}, {"http://" + admin + "/debug/pprof/", 200}, {"http://" + admin + "/readyz", 200},
		{base + "/metrics", 404}, {base + "/debug/pprof/", 404},
	} {
		res, err := http.Get(c.url)
		if err != nil {
			t.Fatalf("GET %s: %v", c.url, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("GET %s: %d, want %d", c.url, res.StatusCode, c.want)
		}
		if c.want == 200 && strings.HasSuffix(c.url, "/metrics") && !strings.Contains(string(body), "http_requests_total{") {
			t.Errorf("/metrics holds no request counts:\n%.500s", body)
		}
	}
	// A second instance whose admin address is taken does not start.
	second := exec.Command(bin, "serve")
	second.Env = append(env, "LISTEN_ADDR="+freePort(t))
	var secondLogs bytes.Buffer
	second.Stderr = &secondLogs
	if err := runWithin(second, 30*time.Second); err == nil || !strings.Contains(secondLogs.String(), "ADMIN_ADDR") {
		t.Errorf("a second instance on the taken admin address %s: exit %v, logs:\n%s", admin, err, secondLogs.String())
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit 30 s after SIGTERM\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "stopped") {
		t.Errorf("no drain log:\n%s", logs.String())
	}
}

func TestRateLimit(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Busy")
		limited := 0
		for i := 0; i < 8; i++ {
			r := e.REST("GET", "/wallets", m.TestSecret, nil)
			if r.Status == 429 {
				limited++
				if r.Code() != "RATE_LIMITED" || r.Header.Get("Retry-After") == "" {
					t.Errorf("429 without code or Retry-After: %s %v", r.Body, r.Header)
				}
			}
		}
		if limited == 0 {
			t.Error("no request was limited at RATE_LIMIT=1")
		}
		// Other keys have their own bucket.
		other := e.Merchant("Calm")
		e.REST("GET", "/wallets", other.TestSecret, nil).Expect(200)
	}, servertest.With("RATE_LIMIT", "1"), servertest.With("RATE_LIMIT_BURST", "2"))
}
