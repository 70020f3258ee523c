package providerhttp

import (
	"context"
	"encoding/json"
	"errors"
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

func TestSendRedactsSecretsFromTransportErrors(t *testing.T) {
	c := NewCaller(rails.ProviderConfig{}, time.Second, "sk_secret", "")
	// A URL that echoes the secret into the transport error's text.
	_, _, err := c.Send(context.Background(), "p GET /", get("http://127.0.0.1:1/?key=sk_secret"))
	if !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("err %v, want an unknown outcome", err)
	}
	if strings.Contains(err.Error(), "sk_secret") || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("error text %q carries the secret", err)
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

// TestStricterCaller: the options an adapter may set (Paystack's) change
// nothing for a caller that leaves them unset.
func TestStricterCaller(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/busy":
			w.WriteHeader(http.StatusTooManyRequests)
		case "/moved":
			http.Redirect(w, r, "/", http.StatusFound)
		default:
			_, _ = w.Write([]byte(`{"ok":true}`))
		}
	}))
	defer srv.Close()
	shared := &http.Client{}
	plain := NewCaller(rails.ProviderConfig{Client: shared}, time.Second, "sk_secret")
	if got, _, err := plain.Send(context.Background(), "p", get(srv.URL+"/busy")); err != nil || got != http.StatusTooManyRequests {
		t.Fatalf("plain 429: %d %v, want the answer for the adapter to judge", got, err)
	}
	if got, _, err := plain.Send(context.Background(), "p", get(srv.URL+"/moved")); err != nil || got != http.StatusOK {
		t.Fatalf("plain redirect: %d %v, want it followed", got, err)
	}

	type unclear struct{ label, what string }
	strict := NewCaller(rails.ProviderConfig{Client: shared}, time.Second, "sk_secret")
	strict.RefuseRedirects()
	strict.UnknownStatuses = []int{http.StatusTooManyRequests}
	var seen []unclear
	strict.Unknown = func(label, what string) error {
		seen = append(seen, unclear{label, what})
		return rails.ErrOutcomeUnknown
	}
	if _, _, err := strict.Send(context.Background(), "p GET /busy", get(srv.URL+"/busy")); !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("strict 429: err %v, want an unknown outcome", err)
	}
	if got, _, err := strict.Send(context.Background(), "p GET /moved", get(srv.URL+"/moved")); err != nil || got != http.StatusFound {
		t.Fatalf("strict redirect: %d %v, want the redirect itself", got, err)
	}
	if shared.CheckRedirect != nil {
		t.Fatal("RefuseRedirects changed the client it was given")
	}
	if _, _, err := strict.Send(context.Background(), "p GET /", get("http://127.0.0.1:1/?account=0123456789")); !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("strict transport failure: err %v, want an unknown outcome", err)
	}
	want := []unclear{{"p GET /busy", "HTTP 429"}, {"p GET /", "the connection failed"}}
	if len(seen) != len(want) || seen[0] != want[0] || seen[1] != want[1] {
		t.Fatalf("Unknown was told %q, want %q", seen, want)
	}
}
