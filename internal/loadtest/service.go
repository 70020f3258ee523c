package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"merchantpay/rest"
	"merchantpay/server"
)

// service is the real service running as a child process.
type service struct {
	cmd  *exec.Cmd
	URL  string // http://127.0.0.1:PORT
	ctl  string // the child's pprof and memstats listener
	log  string // its stderr
	done chan error
	// extra are header name, value pairs the next call sends (callWith).
	extra []string
}

// startService starts the service on dbURL. Without workers it serves HTTP
// only (the round-trip count wants no background statements).
func startService(ctx context.Context, dbURL string, o options, workers bool, env ...string) (*service, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	ctlPort, err := freePort()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp("", "loadtest-service-*.log")
	if err != nil {
		return nil, err
	}
	s := &service{URL: "http://127.0.0.1:" + port, ctl: "http://127.0.0.1:" + ctlPort, log: logFile.Name(), done: make(chan error, 1)}
	w := "1"
	if !workers {
		w = "0"
	}
	s.cmd = exec.Command(exe)
	s.cmd.Env = append(os.Environ(),
		roleEnv+"="+roleServer,
		"LOADTEST_CTL_ADDR=127.0.0.1:"+ctlPort,
		"LOADTEST_WORKERS="+w,
		"DATABASE_URL="+dbURL,
		"LISTEN_ADDR=127.0.0.1:"+port,
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
		return nil, err
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

// memStats is the child's memory after a forced GC.
type memStats struct {
	HeapInuse  uint64 `json:"heap_inuse"`
	StackInuse uint64 `json:"stack_inuse"`
	Sys        uint64 `json:"sys"`
	Goroutines int    `json:"goroutines"`
	RSS        uint64 `json:"rss"`
}

func (s *service) subscribers() (int, error) {
	res, err := http.Get(s.ctl + "/subscribers")
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var n int
	_, err = fmt.Fscan(res.Body, &n)
	return n, err
}

func (s *service) mem() (memStats, error) {
	var m memStats
	res, err := http.Get(s.ctl + "/memstats")
	if err != nil {
		return m, err
	}
	defer res.Body.Close()
	return m, json.NewDecoder(res.Body).Decode(&m)
}

// fetch saves a path of the child's control listener into a file.
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

// runServerRole is the child: the service as `server serve` runs it
// (server.New, its workers, an http.Server), plus a loopback listener for
// pprof, memory figures and the subscriber count.
func runServerRole() int {
	raiseNoFile()
	cfg, err := server.EnvConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	app, err := server.New(ctx, cfg, server.Options{Logger: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer app.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/memstats", func(w http.ResponseWriter, r *http.Request) {
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		_ = json.NewEncoder(w).Encode(memStats{HeapInuse: ms.HeapInuse, StackInuse: ms.StackInuse, Sys: ms.Sys,
			Goroutines: runtime.NumGoroutine(), RSS: rss()})
	})
	mux.HandleFunc("/subscribers", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, app.Broker.Subscribers())
	})
	go func() { _ = http.ListenAndServe(os.Getenv("LOADTEST_CTL_ADDR"), mux) }()

	wait := func() {}
	workCtx, stopWork := context.WithCancel(context.Background())
	defer stopWork()
	if os.Getenv("LOADTEST_WORKERS") != "0" {
		wait = app.RunWorkers(workCtx)
	}
	srv := &http.Server{Addr: cfg.ListenAddr, Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	code := 0
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	stopWork()
	wait()
	return code
}

// rss is this process's resident set size in bytes (Linux).
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
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
func createMerchant(dbURL, name string) (merchant, error) {
	var m merchant
	os.Setenv("DATABASE_URL", dbURL)
	os.Setenv("LOG_LEVEL", "error")
	var out, errb bytes.Buffer
	if code := server.Main([]string{"merchant", "create", "--name", name, "--email", "bench@example.com"}, &out, &errb); code != 0 {
		return m, fmt.Errorf("merchant create: exit %d: %s", code, errb.String())
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
		u = s.URL + rest.Prefix + path
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
// finds a bank code for its withdrawals.
func setup(ctx context.Context, o options, p *pg, prefix string, workers bool, env ...string) (*service, merchant, string, error) {
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
	s, err := startService(ctx, svcURL, o, workers, env...)
	if err != nil {
		return nil, merchant{}, "", err
	}
	m, err := createMerchant(dbURL, "Bench Co")
	if err != nil {
		s.stop()
		return nil, merchant{}, "", err
	}
	for _, cur := range []string{"NGN", "GHS", "USDT"} {
		if _, err := s.call("POST", "/sandbox/balances/fund", m.Secret, map[string]any{"currency": cur, "amount": 10_000_000_000}, nil); err != nil {
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
