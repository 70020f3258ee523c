package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"merchantpay/internal/testdb"
	"merchantpay/rest"
	"merchantpay/server/servertest"
)

// slowClient opens a connection and sends a request whose headers declare
// a body of declared bytes, and only sent of them.
func slowClient(t *testing.T, e *servertest.Env, method, path, key string, declared int, sent string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", e.Srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, path, declared)
	if key != "" {
		req += "X-API-KEY: " + key + "\r\n"
	}
	if _, err := io.WriteString(c, req+"\r\n"+sent); err != nil {
		t.Fatal(err)
	}
	return c
}

// expect408 reads the answer on c within bound: 408 REQUEST_TIMEOUT in
// the envelope, after which the server closes the connection.
func expect408(t *testing.T, c net.Conn, bound time.Duration, what string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(bound))
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Errorf("%s: no answer within %s: %v", what, bound, err)
		return
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Errorf("%s: reading the answer: %v", what, err)
		return
	}
	var env struct {
		StatusCode int    `json:"statusCode"`
		Code       string `json:"code"`
	}
	_ = json.Unmarshal(body, &env)
	if res.StatusCode != http.StatusRequestTimeout || env.Code != "REQUEST_TIMEOUT" || env.StatusCode != 408 || !res.Close {
		t.Errorf("%s: %d (Connection: %q) %s; want 408 REQUEST_TIMEOUT and Connection: close", what, res.StatusCode, res.Header.Get("Connection"), body)
	}
	if n, err := br.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("%s: connection not closed after the 408: %d, %v", what, n, err)
	}
}

// A body that stalls is answered 408 and its connection closed, whether
// the request carries a key or not and whatever the route: with the
// default deadlines, a declared 100-byte body that stops after one byte is
// over well before the 30 s body timeout, by the minimum rate.
func TestSlowBodyIsAnswered408(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		cases := []struct{ name, path, key string }{
			{"keyed REST", rest.Prefix + "/wallets", m.TestSecret},
			{"REST without a key", rest.Prefix + "/wallets", ""},
			{"unknown path", "/nowhere", ""},
			{"GraphQL", "/graphql", m.TestSecret},
			{"checkout", "/checkout/" + strings.Repeat("0", 32) + "/pay", ""},
		}
		var wg sync.WaitGroup
		for _, tc := range cases {
			c := slowClient(t, e, http.MethodPost, tc.path, tc.key, 100, "{")
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				expect408(t, c, 20*time.Second, tc.name)
				if d := time.Since(start); d > 15*time.Second {
					t.Errorf("%s: 408 after %s; the minimum rate should end it within seconds", tc.name, d)
				}
			}()
		}
		wg.Wait()
	})
}

// A body that keeps coming, faster than the minimum rate, but never ends,
// is cut off at the body timeout.
func TestEndlessBodyEndsAtBodyTimeout(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		c := slowClient(t, e, http.MethodPost, rest.Prefix+"/wallets", m.TestSecret, 1<<20, "{")
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			// 64 bytes every 20 ms: 3200 bytes a second, over the minimum.
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte(strings.Repeat(" ", 64))); err != nil {
						return
					}
				}
			}
		}()
		start := time.Now()
		expect408(t, c, 30*time.Second, "endless body")
		if d := time.Since(start); d < 2*time.Second {
			t.Errorf("cut off after %s, before the 3 s body timeout, while keeping the pace", d)
		}
	}, servertest.With("HTTP_BODY_TIMEOUT", "3s"))
}

// While 50 clients hold requests with stalled bodies (with a key and
// without), other requests are answered at once; the stalled ones get 408
// and are closed at the body timeout.
func TestSlowClientsDoNotHoldOthers(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		var slow []net.Conn
		for i := range 50 {
			key := ""
			if i%2 == 0 {
				key = m.TestSecret
			}
			slow = append(slow, slowClient(t, e, http.MethodPost, rest.Prefix+"/wallets", key, 100, "{"))
		}
		for range 3 {
			start := time.Now()
			e.Do(http.MethodGet, "/healthz", "", nil).Expect(200)
			e.REST(http.MethodGet, "/wallets", m.TestSecret, nil).Expect(200)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("other requests took %s while slow clients waited", d)
			}
		}
		var wg sync.WaitGroup
		for i, c := range slow {
			wg.Add(1)
			go func() {
				defer wg.Done()
				expect408(t, c, 40*time.Second, fmt.Sprintf("slow client %d", i))
			}()
		}
		wg.Wait()
	}, servertest.With("HTTP_BODY_TIMEOUT", "6s"), servertest.With("HTTP_BODY_MIN_RATE", "0"))
}

// A client that never finishes its headers is disconnected at the header
// timeout.
func TestSlowHeadersAreCutOff(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		c, err := net.Dial("tcp", e.Srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.ReadAll(c); err != nil || time.Since(start) > 8*time.Second {
			t.Fatalf("connection still open after %s: %v", time.Since(start), err)
		}
	}, servertest.With("HTTP_READ_HEADER_TIMEOUT", "1s"))
}

// A WebSocket subscription is not a request with deadlines: idle past the
// handler and write timeouts, it still answers pings and gets its events.
func TestWebSocketOutlivesRequestDeadlines(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		g := subscribeWS(t, e, "graphql-transport-ws", m.TestSecret,
			`subscription { events(types: [DEPOSIT_SUCCESS]) { id event } }`, nil)
		// What is tested is the passage of time itself: idle past both
		// timeouts (1 s each) and the body timeout.
		time.Sleep(3500 * time.Millisecond)
		if err := g.c.WriteJSON(map[string]any{"type": "ping"}); err != nil {
			t.Fatalf("ping: %v", err)
		}
		_ = g.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var msg struct {
			Type string `json:"type"`
		}
		if err := g.c.ReadJSON(&msg); err != nil || msg.Type != "pong" {
			t.Fatalf("after idling: %q, %v; want pong", msg.Type, err)
		}
		depositTo(t, e, m.TestSecret, acc, "100")
		if ev := g.next(); ev["event"] != "deposit.success" {
			t.Errorf("event: %v", ev)
		}
	}, servertest.With("HTTP_HANDLER_TIMEOUT", "1s"), servertest.With("HTTP_WRITE_TIMEOUT", "1s"),
		servertest.With("HTTP_BODY_TIMEOUT", "1s"))
}

// blockWallets makes the creation of a wallet wait until the test ends:
// on SQLite a transaction holds the one writer connection, on PostgreSQL
// it locks the wallets table. waits counts the waits for it so far (on
// PostgreSQL, those going on).
func blockWallets(t *testing.T, e *servertest.Env) (waits func() int64) {
	t.Helper()
	ctx := context.Background()
	tx, err := e.App.DB.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if e.Kind == testdb.SQLite {
		return func() int64 { return e.App.DB.SQL().Stats().WaitCount }
	}
	if _, err := tx.ExecContext(ctx, "LOCK TABLE wallets IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	return func() int64 {
		var n int64
		if err := e.App.DB.SQL().QueryRowContext(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
			WHERE d.datname = current_database() AND NOT l.granted`).Scan(&n); err != nil {
			t.Errorf("pg_locks: %v", err)
		}
		return n
	}
}

// A request its client abandons while it runs (here, waiting on the
// database) is logged once, by its access-log line, with status 499 and
// outcome client_cancel at INFO, and nothing at ERROR; and when the
// database is free again, the service serves the next request.
func TestAbandonedRequestIsLogged499(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		waits := blockWallets(t, e)
		for _, tc := range []struct{ name, path, body string }{
			{"rest", rest.Prefix + "/wallets", mustJSON(t, sampleWallet("abandoned"))},
			{"graphql", "/graphql", mustJSON(t, map[string]any{
				"query": `mutation($in: CreateWalletInput!) { createWallet(input: $in) { walletReference } }`,
				"variables": map[string]any{"in": map[string]any{"walletReference": "abandoned-gql", "compliance": map[string]any{"phone": "08012345678", "firstname": "Ada", "lastname": "Obi", "email": "ada@example.com",
					"documents": []any{map[string]any{"documentType": "NIN", "documentFile": "https://x.example/nin.png", "documentFileType": "url", "documentNo": "123"}}}}}})},
		} {
			id := "req-abandoned-" + tc.name
			base := int64(0)
			if e.Kind == testdb.SQLite {
				base = waits()
			} else {
				servertest.Eventually(t, 20*time.Second, "no statement waiting", func() bool { return waits() == 0 })
			}
			ctx, cancel := context.WithCancel(context.Background())
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-API-KEY", m.TestSecret)
			req.Header.Set("X-Request-Id", id)
			done := make(chan error, 1)
			go func() {
				res, err := http.DefaultClient.Do(req)
				if err == nil {
					res.Body.Close()
					err = fmt.Errorf("answered %d", res.StatusCode)
				}
				done <- err
			}()
			servertest.Eventually(t, 20*time.Second, tc.name+": the request waiting on the database", func() bool { return waits() > base })
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("%s: client: %v", tc.name, err)
			}
			var line map[string]any
			servertest.Eventually(t, 20*time.Second, tc.name+": the access-log line", func() bool {
				for _, l := range e.Logs.Lines() {
					if l["msg"] == "request" && l["request_id"] == id {
						line = l
						return true
					}
				}
				return false
			})
			if line["status"] != float64(499) || line["level"] != "INFO" || line["outcome"] != "client_cancel" {
				t.Errorf("%s: access-log line %v; want status 499, INFO, outcome client_cancel", tc.name, line)
			}
			n := 0
			for _, l := range e.Logs.Lines() {
				if l["request_id"] == id && l["msg"] == "request" {
					n++
				}
				if l["level"] == "ERROR" {
					t.Errorf("%s: ERROR line: %v", tc.name, l)
				}
			}
			if n != 1 {
				t.Errorf("%s: %d access-log lines, want 1", tc.name, n)
			}
		}
	}, servertest.CaptureLogs(), servertest.WithoutWorkers())
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A request whose work outlasts the handler timeout (here, waiting on a
// database that does not answer it) ends at the timeout as 503
// UNAVAILABLE, and the service answers other requests meanwhile.
func TestHandlerTimeoutEndsTheRequest(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		blockWallets(t, e)
		start := time.Now()
		answered := make(chan *servertest.Resp, 1)
		go func() { answered <- e.REST(http.MethodPost, "/wallets", m.TestSecret, sampleWallet("late")) }()
		var r *servertest.Resp
		select {
		case r = <-answered:
		case <-time.After(30 * time.Second):
			t.Fatal("no answer 30 s into a 2 s handler timeout")
		}
		if d := time.Since(start); d < 2*time.Second || d > 20*time.Second {
			t.Errorf("answered after %s; want the 2 s handler timeout (and the database's grace)", d)
		}
		if r.Status != http.StatusServiceUnavailable || r.Code() != "UNAVAILABLE" {
			t.Errorf("%d %s; want 503 UNAVAILABLE", r.Status, r.Body)
		}
		e.Do(http.MethodGet, "/healthz", "", nil).Expect(200)
	}, servertest.With("HTTP_HANDLER_TIMEOUT", "2s"), servertest.WithoutWorkers())
}

// A GraphQL request refused before it runs because the database does not
// answer (here, its key's look-up waits on a locked table past the handler
// timeout) is 503 UNAVAILABLE with Retry-After, as REST's answers are, and
// the log calls it a warning, not an error of the request. PostgreSQL only:
// SQLite's readers cannot be held this way.
func TestGraphQLUnavailableSaysWhenToRetry(t *testing.T) {
	e := servertest.New(t, testdb.MigratedPostgresURL(t), servertest.With("HTTP_HANDLER_TIMEOUT", "2s"),
		servertest.WithoutWorkers(), servertest.CaptureLogs())
	m := e.Merchant("Acme Pay")
	ctx := context.Background()
	tx, err := e.App.DB.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.ExecContext(ctx, "LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	r := e.GQL(m.TestSecret, `{ me { id } }`, nil)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
		t.Fatalf("%d (Retry-After %q) %s; want 503 with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	r = e.REST(http.MethodGet, "/balances", m.TestSecret, nil)
	if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" || r.Code() != "UNAVAILABLE" {
		t.Fatalf("REST: %d (Retry-After %q) %s; want 503 UNAVAILABLE with Retry-After", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	for _, l := range e.Logs.Lines() {
		if l["level"] == "ERROR" {
			t.Errorf("logged at ERROR while the database was unavailable: %v", l)
		}
	}
}
