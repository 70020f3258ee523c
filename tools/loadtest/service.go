package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// restPrefix is where the service's REST routes live.
const restPrefix = "/v1/merchant/public"

// service is the real service, bin/server, running as a child process.
type service struct {
	cmd  *exec.Cmd
	URL  string // http://127.0.0.1:PORT
	ctl  string // its admin listener: pprof and metrics
	log  string // its stderr
	done chan error
	// extra are header name, value pairs the next call sends (callWith).
	extra []string
}

// startService starts `bin/server serve` on dbURL, its admin listener on a
// loopback port of its own; env adds or overrides variables.
func startService(ctx context.Context, dbURL string, o options, env ...string) (*service, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	ctlPort, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp("", "loadtest-service-*.log")
	if err != nil {
		return nil, err
	}
	s := &service{URL: "http://127.0.0.1:" + port, ctl: "http://127.0.0.1:" + ctlPort, log: logFile.Name(), done: make(chan error, 1)}
	s.cmd = exec.Command(o.serverBin, "serve")
	s.cmd.Env = append(os.Environ(),
		"DATABASE_URL="+dbURL,
		"LISTEN_ADDR=127.0.0.1:"+port,
		"ADMIN_ADDR=127.0.0.1:"+ctlPort,
		"PUBLIC_BASE_URL="+s.URL,
		"RATE_LIMIT=0",
		// The fan-out opens all its subscribers with one key.
		"WS_MAX_SOCKETS_PER_KEY=0",
		"LOG_LEVEL="+o.logLevel,
		"WEBHOOK_ALLOW_PRIVATE=true",
	)
	s.cmd.Env = append(s.cmd.Env, env...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("%s (build it with `make build`): %w", o.serverBin, err)
	}
	go func() { s.done <- s.cmd.Wait(); logFile.Close() }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		res, err := http.Get(s.URL + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case err := <-s.done:
			return nil, fmt.Errorf("the service exited (%v); its log: %s\n%s", err, s.log, tail(s.log))
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("the service did not become ready; its log: %s", s.log)
		}
	}
}

// stop sends SIGTERM (the service drains) and waits.
func (s *service) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
	_ = os.Remove(s.log)
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func freePort() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), nil
}

// memStats is the child's memory after a garbage collection.
type memStats struct {
	HeapInuse  uint64
	StackInuse uint64
	Sys        uint64
	Goroutines int
	RSS        uint64
}

// metrics reads the gauges named from the child's /metrics (Prometheus
// text format; the named ones carry no labels).
func (s *service) metrics(names ...string) (map[string]float64, error) {
	res, err := http.Get(s.ctl + "/metrics")
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("metrics: %s", res.Status)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if ok && want[name] {
			if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
				out[name] = v
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return nil, fmt.Errorf("metrics: no %s", n)
		}
	}
	return out, nil
}

func (s *service) subscribers() (int, error) {
	m, err := s.metrics("graphql_subscribers")
	if err != nil {
		return 0, err
	}
	return int(m["graphql_subscribers"]), nil
}

// mem collects the child's garbage first (a heap profile with gc=1 runs
// one), then reads its Go memory gauges and its resident set from /proc.
func (s *service) mem() (memStats, error) {
	var m memStats
	res, err := http.Get(s.ctl + "/debug/pprof/heap?gc=1")
	if err != nil {
		return m, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	g, err := s.metrics("go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes", "go_memstats_sys_bytes", "go_goroutines")
	if err != nil {
		return m, err
	}
	m.HeapInuse, m.StackInuse = uint64(g["go_memstats_heap_inuse_bytes"]), uint64(g["go_memstats_stack_inuse_bytes"])
	m.Sys, m.Goroutines = uint64(g["go_memstats_sys_bytes"]), int(g["go_goroutines"])
	m.RSS = rss(s.cmd.Process.Pid)
	return m, nil
}

// fetch saves a path of the child's admin listener into a file.
func (s *service) fetch(path, file string) error {
	res, err := http.Get(s.ctl + path)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, res.Body)
	return err
}

// cpuProfile records the child's CPU profile for d into path.
func (s *service) cpuProfile(path string, d time.Duration) error {
	return s.profile("profile", path, d)
}

// profile records the child's profile kind (profile: CPU; allocs: heap
// allocations) over d into path.
func (s *service) profile(kind, path string, d time.Duration) error {
	res, err := http.Get(fmt.Sprintf("%s/debug/pprof/%s?seconds=%d", s.ctl, kind, int(d.Seconds())))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: %s", res.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, res.Body)
	return err
}

// rss is the resident set size of process pid in bytes (Linux).
func rss(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// merchant is the benchmark's merchant.
type merchant struct {
	ID     string `json:"merchant_id"`
	Secret string `json:"test_secret_key"`
	// Bank is a Nigerian bank code from the service's list (setup sets it).
	Bank string `json:"-"`
}

// createMerchant makes a merchant with the service's own CLI command.
func createMerchant(o options, dbURL, name string) (merchant, error) {
	var m merchant
	cmd := exec.Command(o.serverBin, "merchant", "create", "--name", name, "--email", "bench@example.com")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "LOG_LEVEL=error", "ADMIN_ADDR=off")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return m, fmt.Errorf("merchant create: %v: %s", err, errb.String())
	}
	return m, json.Unmarshal(out.Bytes(), &m)
}

// client is a plain HTTP client for set-up calls.
var setupClient = &http.Client{Timeout: 30 * time.Second}

// call sends a JSON request and decodes the answer into out (may be nil).
func (s *service) call(method, path, key string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	u := s.URL + path
	if !strings.HasPrefix(path, "/graphql") {
		u = s.URL + restPrefix + path
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("X-API-KEY", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(s.extra); i += 2 {
		req.Header.Set(s.extra[i], s.extra[i+1])
	}
	res, err := setupClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode >= 300 {
		return res.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		return res.StatusCode, json.Unmarshal(b, out)
	}
	return res.StatusCode, nil
}

// setup starts a service on a fresh database with a funded merchant and
// finds a bank code for its withdrawals. LOADTEST_PROXY=ADDR among env
// sends the service's database traffic through a counting proxy.
func setup(ctx context.Context, o options, p *pg, prefix string, env ...string) (*service, merchant, string, error) {
	dbURL, err := p.create(ctx, prefix)
	if err != nil {
		return nil, merchant{}, "", err
	}
	svcURL := dbURL
	for _, e := range env {
		// The service may reach the database through a counting proxy.
		if addr, ok := strings.CutPrefix(e, "LOADTEST_PROXY="); ok {
			u, _ := url.Parse(dbURL)
			u.Host = addr
			svcURL = u.String()
		}
	}
	s, err := startService(ctx, svcURL, o, env...)
	if err != nil {
		return nil, merchant{}, "", err
	}
	m, err := createMerchant(o, dbURL, "Bench Co")
	if err != nil {
		s.stop()
		return nil, merchant{}, "", err
	}
	for _, cur := range []string{"NGN", "GHS", "USDT"} {
		if err := s.fund(m.Secret, cur); err != nil {
			s.stop()
			return nil, merchant{}, "", err
		}
	}
	if m.Bank, err = s.bankCode(m.Secret); err != nil {
		s.stop()
		return nil, merchant{}, "", err
	}
	return s, m, dbURL, nil
}

// fundAmount is what fund credits: at 100 NGN and its fee per withdrawal,
// more than a phase of any length this harness runs can spend.
const fundAmount = 10_000_000_000

// fund credits the merchant of key with fundAmount of cur through the
// sandbox route.
func (s *service) fund(key, cur string) error {
	_, err := s.call("POST", "/sandbox/balances/fund", key, map[string]any{"currency": cur, "amount": fundAmount}, nil)
	return err
}

// bankCode is the first Nigerian bank code of the directory.
func (s *service) bankCode(key string) (string, error) {
	var env struct {
		Data []struct {
			Code string `json:"code"`
		} `json:"data"`
	}
	if _, err := s.call("GET", "/misc/banks?country=NG", key, nil, &env); err != nil {
		return "", err
	}
	if len(env.Data) == 0 {
		return "", errors.New("no Nigerian banks")
	}
	return env.Data[0].Code, nil
}
