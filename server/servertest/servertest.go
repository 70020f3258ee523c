// Package servertest starts the real service over HTTP for end-to-end tests:
// a fresh database (SQLite, and PostgreSQL when configured), a fake clock,
// the workers, and helpers that talk to it as merchants' code does.
package servertest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"merchantpay/internal/clock"
	"merchantpay/internal/merchants"
	"merchantpay/internal/rails"
	"merchantpay/internal/testdb"
	"merchantpay/rest"
	"merchantpay/server"
)

// Env is one running service.
type Env struct {
	stopWorkers func()

	T     testing.TB
	App   *server.App
	Srv   *httptest.Server
	URL   string
	Clock *clock.Fake
	DBURL string
	// Kind is testdb.SQLite or testdb.Postgres.
	Kind string
	// Logs holds every line the service logged, when CaptureLogs was given.
	Logs *Logs
}

// Option changes how the service under test is started.
type Option func(s *settings)

// settings are what the options set.
type settings struct {
	env         map[string]string
	noWorkers   bool
	resolver    *net.Resolver
	lookupBound time.Duration
	captureLogs bool
	simulations rails.Simulations
}

// With sets one environment variable.
func With(name, value string) Option { return func(s *settings) { s.env[name] = value } }

// WithoutWorkers starts no background workers (job pollers, dispatchers), so
// a test decides alone what happens to a row and when.
func WithoutWorkers() Option { return func(s *settings) { s.noWorkers = true } }

// WithWebhookGuard turns the webhook address guard on, as in production
// (WEBHOOK_ALLOW_PRIVATE=false). By default the harness turns it off, so
// tests can deliver to receivers on 127.0.0.1.
func WithWebhookGuard() Option { return With("WEBHOOK_ALLOW_PRIVATE", "false") }

// WithSimulations offers the sandbox's simulations in the modes s says,
// instead of those the configuration gives.
func WithSimulations(s rails.Simulations) Option { return func(set *settings) { set.simulations = s } }

// WithWebhookResolver makes the service look webhook hosts up through r,
// when endpoints are saved and when deliveries connect.
func WithWebhookResolver(r *net.Resolver) Option { return func(s *settings) { s.resolver = r } }

// WithWebhookLookupTimeout bounds the look-up of a webhook host when an
// endpoint is saved by d instead of the production default.
func WithWebhookLookupTimeout(d time.Duration) Option {
	return func(s *settings) { s.lookupBound = d }
}

// CaptureLogs keeps every line the service logs, at every level, in
// Env.Logs.
func CaptureLogs() Option { return func(s *settings) { s.captureLogs = true } }

// Logs are the lines a service logged, as JSON.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Lines returns the lines logged so far, decoded.
func (l *Logs) Lines() []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(l.buf.Bytes(), []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Each runs fn once per available database with a fresh service, on a
// fresh migrated database (its start-up finds no migration to apply).
func Each(t *testing.T, fn func(t *testing.T, e *Env), opts ...Option) {
	t.Helper()
	testdb.EachMigrated(t, func(t *testing.T, dbURL string) {
		fn(t, New(t, dbURL, opts...))
	})
}

// New starts the service on dbURL.
func New(t testing.TB, dbURL string, opts ...Option) *Env {
	t.Helper()
	e := &Env{T: t, DBURL: dbURL, Clock: clock.NewFake(time.Now()), Kind: testdb.SQLite}
	if strings.HasPrefix(dbURL, "postgres") {
		e.Kind = testdb.Postgres
	}
	// The listener comes first so the service knows its public URL; the
	// server, with the service's own settings, once the app exists.
	e.Srv = httptest.NewUnstartedServer(http.NotFoundHandler())
	t.Cleanup(e.Srv.Close)
	e.URL = "http://" + e.Srv.Listener.Addr().String()
	set := settings{env: map[string]string{
		"DATABASE_URL":    dbURL,
		"PUBLIC_BASE_URL": e.URL,
		"RATE_LIMIT":      "0",
		// Receivers under test listen on 127.0.0.1; WithWebhookGuard turns
		// the guard back on.
		"WEBHOOK_ALLOW_PRIVATE": "true",
		"SANDBOX_PAYOUT_DELAY":  "3s",
		// Quotes at exactly the configured mid; tests opt into the sandbox market.
		"PRICE_SOURCE": "static",
	}}
	for _, o := range opts {
		o(&set)
	}
	cfg, err := server.LoadConfig(func(k string) string { return set.env[k] })
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	level := slog.LevelError
	if os.Getenv("TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	var logTo slog.Handler = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})
	if set.captureLogs {
		e.Logs = &Logs{}
		logTo = slog.NewMultiHandler(logTo, slog.NewJSONHandler(e.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	log := slog.New(logTo)
	app, err := server.New(context.Background(), cfg, server.Options{Clock: e.Clock, Logger: log, WebhookResolver: set.resolver,
		WebhookLookupTimeout: set.lookupBound,
		Simulations:          set.simulations})
	if err != nil {
		t.Fatalf("start service: %v", err)
	}
	e.App = app
	e.Srv.Config = server.NewHTTPServer(cfg, app.Handler())
	e.Srv.Start()
	if e.Srv.URL != e.URL {
		t.Fatalf("server at %s, want %s", e.Srv.URL, e.URL)
	}
	ctx, cancel := context.WithCancel(context.Background())
	wait := func() {}
	if !set.noWorkers {
		wait = app.RunWorkers(ctx)
	}
	var stopOnce sync.Once
	e.stopWorkers = func() { stopOnce.Do(func() { cancel(); wait() }) }
	t.Cleanup(func() {
		app.WebSockets.Shutdown()
		e.stopWorkers()
		app.Close()
	})
	return e
}

// StopWorkers stops the background workers and waits until they have: a
// test that let them do a first step (submit payouts) then takes the next
// step itself.
func (e *Env) StopWorkers() { e.stopWorkers() }

// Merchant is a merchant with its four keys.
type Merchant struct {
	ID         string
	TestSecret string
	TestPublic string
	LiveSecret string
	LivePublic string
}

// Merchant creates a merchant through the same operation as the CLI.
func (e *Env) Merchant(name string) Merchant {
	e.T.Helper()
	c, err := e.App.Merchants.Create(context.Background(), name, strings.ToLower(strings.ReplaceAll(name, " ", "."))+"@example.com")
	if err != nil {
		e.T.Fatalf("create merchant: %v", err)
	}
	return Merchant{ID: c.MerchantID, TestSecret: c.TestSecretKey, TestPublic: c.TestPublicKey,
		LiveSecret: c.LiveSecretKey, LivePublic: c.LivePublicKey}
}

// Resp is an HTTP answer.
type Resp struct {
	T      testing.TB
	Status int
	Header http.Header
	Body   []byte
	// JSON is the decoded body (numbers as json.Number), nil when not JSON.
	JSON map[string]any
}

// REST calls a path under /v1/merchant/public. body may be nil, a string
// (sent as is), []byte, or a value encoded as JSON. headers are name, value
// pairs.
func (e *Env) REST(method, path, key string, body any, headers ...string) *Resp {
	e.T.Helper()
	return e.Do(method, rest.Prefix+path, key, body, headers...)
}

// Do calls any path of the service. body is a string or []byte sent as
// is, an io.Reader sent chunked, or a value sent as JSON.
func (e *Env) Do(method, path, key string, body any, headers ...string) *Resp {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b // of unknown length: sent chunked
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.T.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		e.T.Fatalf("request: %v", err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-KEY", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.T.Fatalf("read body: %v", err)
	}
	r := &Resp{T: e.T, Status: res.StatusCode, Header: res.Header, Body: raw}
	CheckContract(e.T, method, req.URL.Path, res.StatusCode, res.Header, raw)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) == nil {
		r.JSON = m
	}
	return r
}

// GQL posts a GraphQL operation.
func (e *Env) GQL(key, query string, vars map[string]any, headers ...string) *Resp {
	e.T.Helper()
	body := map[string]any{"query": query}
	if vars != nil {
		body["variables"] = vars
	}
	return e.Do(http.MethodPost, "/graphql", key, body, headers...)
}

// Expect fails the test unless the status is want.
func (r *Resp) Expect(want int) *Resp {
	r.T.Helper()
	if r.Status != want {
		r.T.Fatalf("status %d, want %d; body: %s", r.Status, want, r.Body)
	}
	return r
}

// Data is the envelope's data object (nil when not an object).
func (r *Resp) Data() map[string]any {
	d, _ := r.JSON["data"].(map[string]any)
	return d
}

// List is the envelope's data array.
func (r *Resp) List() []any {
	d, _ := r.JSON["data"].([]any)
	return d
}

// Code is the envelope's error code (or the first GraphQL error's
// extensions.code).
func (r *Resp) Code() string {
	if c, ok := r.JSON["code"].(string); ok {
		return c
	}
	if errs, ok := r.JSON["errors"].([]any); ok && len(errs) > 0 {
		if e, ok := errs[0].(map[string]any); ok {
			if ext, ok := e["extensions"].(map[string]any); ok {
				c, _ := ext["code"].(string)
				return c
			}
		}
	}
	return ""
}

// Fields lists the field names of an error envelope's errors.
func (r *Resp) Fields() []string {
	var out []string
	errs, _ := r.JSON["errors"].([]any)
	for _, x := range errs {
		if m, ok := x.(map[string]any); ok {
			if f, ok := m["field"].(string); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// GQLData is a GraphQL answer's data object; it fails on errors.
func (r *Resp) GQLData() map[string]any {
	r.T.Helper()
	if errs, ok := r.JSON["errors"]; ok {
		r.T.Fatalf("graphql errors: %v; body: %s", errs, r.Body)
	}
	d, _ := r.JSON["data"].(map[string]any)
	return d
}

// Principal is what a key authenticates as (for tests that call operations directly).
func (e *Env) Principal(key string) merchants.Principal {
	e.T.Helper()
	p, err := e.App.Merchants.Authenticate(context.Background(), key)
	if err != nil {
		e.T.Fatalf("authenticate: %v", err)
	}
	return p
}

// Eventually polls cond until it holds or the deadline passes (no sleeps to
// wait for background work).
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
