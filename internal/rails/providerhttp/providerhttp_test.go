package providerhttp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/rails"
)

func get(url string) func(context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	}
}

func TestSendSortsAnswers(t *testing.T) {
	status := http.StatusOK
	hold := make(chan struct{})
	defer close(hold)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	c := NewCaller(rails.ProviderConfig{}, 200*time.Millisecond, "sk_secret")

	for _, s := range []int{http.StatusOK, http.StatusBadRequest, 499} {
		status = s
		got, body, err := c.Send(context.Background(), "p GET /", get(srv.URL+"/"))
		if err != nil || got != s || string(body) != `{"ok":true}` {
			t.Fatalf("HTTP %d: got %d %q %v, want the answer for the adapter to judge", s, got, body, err)
		}
	}
	for _, s := range []int{http.StatusInternalServerError, http.StatusBadGateway} {
		status = s
		if _, _, err := c.Send(context.Background(), "p GET /", get(srv.URL+"/")); !errors.Is(err, rails.ErrOutcomeUnknown) {
			t.Fatalf("HTTP %d: err %v, want an unknown outcome", s, err)
		}
	}
	if _, _, err := c.Send(context.Background(), "p GET /slow", get(srv.URL+"/slow")); !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("timeout: err %v, want an unknown outcome", err)
	}
	built := errors.New("cannot build")
	_, _, err := c.Send(context.Background(), "p", func(context.Context) (*http.Request, error) { return nil, built })
	if err != built {
		t.Fatalf("build error: got %v, want it unchanged", err)
	}
}

// TestTransportErrorsQuoteNothing: a transport error's own text quotes the
// request's address (a secret or an account number in its query); the
// error says what happened instead.
func TestTransportErrorsQuoteNothing(t *testing.T) {
	c := NewCaller(rails.ProviderConfig{}, time.Second, "sk_secret", "")
	_, _, err := c.Send(context.Background(), "p GET /", get("http://127.0.0.1:1/?key=sk_secret&account=0123456789"))
	if !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("err %v, want an unknown outcome", err)
	}
	for _, leak := range []string{"sk_secret", "0123456789", "127.0.0.1:1", "[redacted]"} {
		if strings.Contains(err.Error(), leak) {
			t.Fatalf("error text %q quotes the transport's error (%q)", err, leak)
		}
	}
	if !strings.HasSuffix(err.Error(), ": p GET /: the connection failed") {
		t.Fatalf("error text %q does not say what failed", err)
	}
}

func TestDecodeDataKeepsNumbersExact(t *testing.T) {
	var out map[string]any
	if err := DecodeData("p", []byte(`{"id":12345678901234567890}`), &out); err != nil {
		t.Fatal(err)
	}
	if got := out["id"]; got != any(json.Number("12345678901234567890")) {
		t.Fatalf("id %#v, want the digits exactly", got)
	}
	if err := DecodeData("p", []byte(`{"id":`), &out); !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("err %v, want an unknown outcome", err)
	}
}

func TestClipCutsOnRuneBoundary(t *testing.T) {
	if got := Clip("  héllo ", 2); got != "h" {
		t.Fatalf("Clip = %q, want %q", got, "h")
	}
	if got := Clip("abc", 5); got != "abc" {
		t.Fatalf("Clip = %q", got)
	}
}

func TestBaseURL(t *testing.T) {
	if got, err := BaseURL("p", "", "https://default"); err != nil || got != "https://default" {
		t.Fatalf("empty: %q %v", got, err)
	}
	if got, err := BaseURL("p", "http://127.0.0.1:8080/", "d"); err != nil || got != "http://127.0.0.1:8080" {
		t.Fatalf("loopback: %q %v", got, err)
	}
	for _, bad := range []string{"ftp://h", "https://", "https://h/v3", "https://h?x=1", "https://u:p@h"} {
		if _, err := BaseURL("p", bad, "d"); err == nil || !strings.HasPrefix(err.Error(), "p: base URL") {
			t.Fatalf("%q: err %v, want a refusal", bad, err)
		}
	}
}

// TestSendNeverFollowsRedirects: every caller hands no redirect to its
// client to follow (a POST would be sent again, or turned into a GET
// elsewhere) and calls it an unknown outcome; the client it was given is
// not changed.
func TestSendNeverFollowsRedirects(t *testing.T) {
	var elsewhere int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/found":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/temporary":
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		case "/permanent":
			http.Redirect(w, r, "/elsewhere", http.StatusPermanentRedirect)
		default:
			elsewhere++
			_, _ = w.Write([]byte(`{"ok":true}`))
		}
	}))
	defer srv.Close()
	shared := &http.Client{}
	c := NewCaller(rails.ProviderConfig{Client: shared}, time.Second, "sk_secret")
	for _, path := range []string{"/found", "/temporary", "/permanent"} {
		post := func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, strings.NewReader(`{"amount":1}`))
		}
		got, _, err := c.Send(context.Background(), "p POST "+path, post)
		if !errors.Is(err, rails.ErrOutcomeUnknown) || got != 0 || !strings.Contains(err.Error(), "redirect") {
			t.Fatalf("%s: %d %v, want an unknown outcome naming the redirect", path, got, err)
		}
	}
	if elsewhere != 0 {
		t.Fatalf("the redirects were followed %d times", elsewhere)
	}
	if shared.CheckRedirect != nil {
		t.Fatal("Send changed the client it was given")
	}
}

// TestTooManyRequestsIsUnknown: a 429 says nothing certain about what the
// provider did, whichever provider answers it.
func TestTooManyRequestsIsUnknown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"status":false,"message":"Rate limit exceeded!"}`))
	}))
	defer srv.Close()
	c := NewCaller(rails.ProviderConfig{}, time.Second)
	got, _, err := c.Send(context.Background(), "p GET /busy", get(srv.URL+"/busy"))
	if !errors.Is(err, rails.ErrOutcomeUnknown) || got != 0 || !strings.HasSuffix(err.Error(), ": p GET /busy: HTTP 429") {
		t.Fatalf("429: %d %v, want an unknown outcome", got, err)
	}
}

// TestSendJSON: the Bearer key, JSON both ways, the body only when there
// is one.
func TestSendJSON(t *testing.T) {
	type seen struct{ method, auth, accept, ctype, body string }
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.Header.Get("Authorization"), r.Header.Get("Accept"), r.Header.Get("Content-Type"), string(b)})
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()
	c := NewCaller(rails.ProviderConfig{}, time.Second, "sk_secret")
	if s, body, err := c.SendJSON(context.Background(), "p POST /x", http.MethodPost, srv.URL+"/x", "sk_secret", map[string]int{"amount": 5}); err != nil || s != 200 || string(body) != `{"ok":true}` {
		t.Fatalf("POST: %d %q %v", s, body, err)
	}
	if _, _, err := c.SendJSON(context.Background(), "p GET /x", http.MethodGet, srv.URL+"/x", "sk_secret", nil); err != nil {
		t.Fatalf("GET: %v", err)
	}
	want := []seen{{"POST", "Bearer sk_secret", "application/json", "application/json", `{"amount":5}`},
		{"GET", "Bearer sk_secret", "application/json", "", ""}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("requests %+v, want %+v", got, want)
	}
	_, _, err := c.SendJSON(context.Background(), "p GET /y", http.MethodGet, "http://127.0.0.1:1/y?account=0123456789\x7f", "k", nil)
	if err == nil || strings.Contains(err.Error(), "0123456789") {
		t.Fatalf("a request that cannot be built: %v, want an error that does not quote the address", err)
	}
}

// TestQuote: credentials are redacted before the text is shortened, so no
// part of one survives the cut, and no control character is kept.
func TestQuote(t *testing.T) {
	c := NewCaller(rails.ProviderConfig{}, time.Second, "sk_secret_0123456789")
	msg := strings.Repeat("x", 190) + " key sk_secret_0123456789 refused"
	if got := c.Quote(msg, 200); strings.Contains(got, "sk_s") || len(got) > 200 {
		t.Fatalf("Quote kept part of the key: %q", got)
	}
	if got := c.Quote("bad\r\nlevel=ERROR forged\x7f", 200); got != "bad  level=ERROR forged" {
		t.Fatalf("Quote = %q", got)
	}
}
