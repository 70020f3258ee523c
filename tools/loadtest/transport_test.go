package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The lean transport carries what vegeta sends (method, path and query,
// headers, a body of known length) and what the service answers, keeps one
// connection per worker alive, and opens a new one when the server closes
// the old.
func TestLeanTransport(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("close") == "1" {
			w.Header().Set("Connection", "close")
		}
		w.Header().Set("X-Seen", r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("X-Api-Key")+" "+string(body))
		if r.URL.Path == "/missing" {
			w.WriteHeader(http.StatusNotFound)
		}
		io.WriteString(w, strings.Repeat("x", 5000)) // more than one read
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	lt := newLeanTransport(2, 5*time.Second)
	defer lt.closeIdle()
	c := &http.Client{Transport: lt}
	do := func(method, path, body string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if body != "" {
			req, err = http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		}
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Api-Key", "sk_1")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	for i := range 3 {
		resp, b := do("POST", "/w?i=1", `{"amount":1}`)
		if got := resp.Header.Get("X-Seen"); resp.StatusCode != 200 || got != `POST /w?i=1 sk_1 {"amount":1}` || len(b) != 5000 {
			t.Fatalf("POST %d: %d %q, %d bytes", i, resp.StatusCode, got, len(b))
		}
	}
	if resp, _ := do("GET", "/missing", ""); resp.StatusCode != 404 || resp.Header.Get("X-Seen") != "GET /missing sk_1" {
		t.Fatalf("GET: %d %q", resp.StatusCode, resp.Header.Get("X-Seen"))
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for four requests in a row, want 1", n)
	}
	do("GET", "/x?close=1", "")
	do("GET", "/x", "")
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections after the server closed one, want 2", n)
	}

	// Under vegeta, closed loop, a body read only in part.
	a := vegeta.NewAttacker(vegeta.Workers(2), vegeta.MaxWorkers(2), vegeta.MaxBody(10), vegeta.Client(c))
	tr := vegeta.NewStaticTargeter(vegeta.Target{Method: "POST", URL: srv.URL + "/w", Body: []byte("b"), Header: http.Header{"X-Api-Key": {"k"}}})
	n := 0
	for res := range a.Attack(tr, vegeta.Rate{Freq: 0}, 200*time.Millisecond, "t") {
		if res.Error != "" || res.Code != 200 || len(res.Body) != 10 {
			t.Fatalf("vegeta: %q %d %d bytes", res.Error, res.Code, len(res.Body))
		}
		n++
	}
	if n < 10 || conns.Load() > 4 {
		t.Errorf("vegeta: %d requests over %d connections in all", n, conns.Load())
	}
}
