package paystack_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/rails"
	"merchantpay/internal/rails/paystack"
	"merchantpay/internal/rails/paystack/paystackfake"
)

func TestNewValidatesBaseURLAndKey(t *testing.T) {
	for _, u := range []string{"", "https://api.paystack.co", "https://api.paystack.co/", "http://127.0.0.1:8080"} {
		if _, err := paystack.New(rails.ProviderConfig{BaseURL: u}, testKey); err != nil {
			t.Errorf("New(%q): %v", u, err)
		}
	}
	for _, u := range []string{"api.paystack.co", "ftp://api.paystack.co", "https://api.paystack.co/v1",
		"https://api.paystack.co?x=1", "https://user:pw@api.paystack.co", "https://", "https://api.paystack.co#f", "://x"} {
		if _, err := paystack.New(rails.ProviderConfig{BaseURL: u}, testKey); err == nil {
			t.Errorf("New(%q) accepted a base URL that is not scheme and host", u)
		}
	}
	for _, k := range []string{"", "sk_test_ab cd", "sk_test_ab\r\nX-Evil: 1"} {
		_, err := paystack.New(rails.ProviderConfig{}, k)
		if err == nil {
			t.Errorf("New accepted the key %q", k)
		} else if k != "" && strings.Contains(err.Error(), k) {
			t.Errorf("New's error quotes the key: %v", err)
		}
	}
}

// TestNoSecretInErrors drives every kind of failure, including a provider
// that echoes the key back, and checks no error or reason quotes it.
func TestNoSecretInErrors(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		switch r.URL.Path {
		case "/transfer/verify/" + paystack.ProviderReference(ourRef):
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"status":false,"message":"Transfer not found"}`))
		case "/bank/resolve":
			w.WriteHeader(http.StatusUnprocessableEntity)
			w.Write([]byte(`{"status":false,"message":"bad header ` + auth + `"}`))
		default:
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":false,"message":"key ` + auth + ` refused"}`))
		}
	}))
	defer echo.Close()
	f := newFake(t)
	var texts []string
	note := func(res rails.PayoutResult, err error) {
		texts = append(texts, res.Reason)
		if err != nil {
			texts = append(texts, err.Error())
		}
	}
	ctx := context.Background()
	c := newClientTimeout(t, echo.URL, time.Second)
	note(c.SubmitPayout(ctx, payout(ourRef)))
	_, err := c.ResolveAccount(ctx, benBank, benAccount)
	note(rails.PayoutResult{}, err)
	_, err = c.CreateVirtualAccount(ctx, vaRequest("acct-ref-echo"))
	note(rails.PayoutResult{}, err)

	c = newClientTimeout(t, f.URL(), time.Second)
	for _, ft := range []paystackfake.Fault{paystackfake.Timeout, paystackfake.ServerError, paystackfake.Reset, paystackfake.Garbage} {
		f.FailNext(http.MethodGet, "/transfer/verify/", ft, false)
		note(c.SubmitPayout(ctx, payout(ourRef)))
	}
	wrongKey, _ := paystack.New(rails.ProviderConfig{BaseURL: f.URL()}, "sk_test_not_the_fakes_key_123")
	note(wrongKey.SubmitPayout(ctx, payout(ourRef)))
	texts = append(texts, "")
	_, err = wrongKey.ResolveAccount(ctx, benBank, benAccount)
	note(rails.PayoutResult{}, err)

	if len(texts) < 10 {
		t.Fatalf("only %d texts collected", len(texts))
	}
	for _, s := range texts {
		if strings.Contains(s, testKey) || strings.Contains(s, "sk_test_not_the_fakes_key_123") {
			t.Errorf("text quotes the secret: %q", s)
		}
	}
	if !strings.Contains(strings.Join(texts, "\n"), "[redacted]") {
		t.Errorf("the echoed key was not redacted: %q", texts)
	}
}

func TestWrongKeyIsNotAFailedPayout(t *testing.T) {
	f := newFake(t)
	c, _ := paystack.New(rails.ProviderConfig{BaseURL: f.URL()}, "sk_test_wrong_key_0000")
	res, err := c.SubmitPayout(context.Background(), payout(ourRef))
	if err == nil || res.Status == rails.PayoutFailed {
		t.Fatalf("SubmitPayout with a wrong key: %+v, %v", res, err)
	}
	if errors.Is(err, rails.ErrNoRecord) {
		t.Fatalf("a refused key reads as no record: %v", err)
	}
	// A key refused after the look-up (by the recipient call) is no
	// failed payout either.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/transfer/verify/") {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"status":false,"message":"Transfer not found"}`))
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"status":false,"message":"Invalid key"}`))
	}))
	defer srv.Close()
	res, err = newClient(t, srv.URL).SubmitPayout(context.Background(), payout(ourRef))
	if err == nil || res.Status == rails.PayoutFailed {
		t.Fatalf("SubmitPayout refused at the recipient: %+v, %v", res, err)
	}
}

// TestTooManyRequestsIsUnknown: a 429 says nothing about the transfer, even
// with Paystack's refusal envelope; it never reads as a refusal.
func TestTooManyRequestsIsUnknown(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"status":false,"message":"Too many requests"}`))
	}))
	defer srv.Close()
	res, err := newClient(t, srv.URL).SubmitPayout(context.Background(), payout(ourRef))
	if !errors.Is(err, rails.ErrOutcomeUnknown) || res.Status == rails.PayoutFailed || !strings.Contains(err.Error(), "HTTP 429") {
		t.Fatalf("SubmitPayout answered 429: %+v, %v; want an unknown outcome", res, err)
	}
	if calls != 1 {
		t.Fatalf("%d calls, want the look-up alone", calls)
	}
}

// TestProviderTextIsQuotedPrintable: Paystack's text in a reason or an
// error keeps no control character (it would break a log line) and no part
// of an echoed key, even where the text is cut.
func TestProviderTextIsQuotedPrintable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/transferrecipient":
			w.Write([]byte(`{"status":true,"message":"ok","data":{"recipient_code":"RCP_x"}}`))
		case "/transfer":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":false,"message":"Your balance\nlevel=ERROR is not enough\u0000"}`))
		case "/bank/resolve":
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"status":false,"message":"` + strings.Repeat("x", 190) + r.Header.Get("Authorization")[len("Bearer "):] + `"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"status":false,"message":"Transfer not found"}`))
		}
	}))
	defer srv.Close()
	c := newClient(t, srv.URL)
	res, err := c.SubmitPayout(context.Background(), payout(ourRef))
	if err != nil || res.Status != rails.PayoutFailed || res.Reason != "Paystack refused the transfer: Your balance level=ERROR is not enough" {
		t.Fatalf("result %+v, %v", res, err)
	}
	_, err = c.ResolveAccount(context.Background(), benBank, benAccount)
	if err == nil || strings.Contains(err.Error(), testKey[:7]) {
		t.Fatalf("error %v quotes part of the key", err)
	}
}
