package binancepay_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/rails"
	"merchantpay/internal/rails/binancepay"
)

// notFound is Binance's answer for a missing order: read as "no record",
// after which the expiry worker fails the deposit.
const notFound = `{"status":"FAIL","code":"400202","errorMessage":"Order not found."}`

// stub hands every request but those to /moved to answer; those to /moved
// are counted and answered notFound.
func stub(t *testing.T, answer http.HandlerFunc) (*binancepay.Client, *int) {
	t.Helper()
	var moved int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			moved++
			_, _ = w.Write([]byte(notFound))
			return
		}
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := binancepay.New(rails.ProviderConfig{BaseURL: srv.URL, Timeout: time.Second}, apiKey, secretKey)
	if err != nil {
		t.Fatal(err)
	}
	return c, &moved
}

// TestRedirectIsNeverFollowed: a redirect is an unknown outcome, never
// followed: a 307 would carry the signed request and the API key to its
// target, and the target's "not found" would read as no order at all.
func TestRedirectIsNeverFollowed(t *testing.T) {
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		c, moved := stub(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/moved", code)
		})
		_, err := c.QueryOrder(context.Background(), "DEP-redirected")
		if !errors.Is(err, rails.ErrOutcomeUnknown) || errors.Is(err, rails.ErrNoRecord) {
			t.Fatalf("HTTP %d: %v; want an unknown outcome", code, err)
		}
		if _, err := c.CreateOrder(context.Background(), order("DEP-redirected")); !errors.Is(err, rails.ErrOutcomeUnknown) {
			t.Fatalf("HTTP %d to the order: %v; want an unknown outcome", code, err)
		}
		if *moved != 0 {
			t.Fatalf("HTTP %d: %d requests followed the redirect", code, *moved)
		}
	}
}

// TestTooManyRequestsIsUnknown: a 429 says nothing certain, even with a
// FAIL envelope in it.
func TestTooManyRequestsIsUnknown(t *testing.T) {
	c, _ := stub(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(notFound))
	})
	_, err := c.QueryOrder(context.Background(), "DEP-busy")
	if !errors.Is(err, rails.ErrOutcomeUnknown) || errors.Is(err, rails.ErrNoRecord) || !strings.Contains(err.Error(), "HTTP 429") {
		t.Fatalf("429: %v; want an unknown outcome", err)
	}
}

// TestTransportErrorQuotesNoAddress: a failed connection is an unknown
// outcome whose text does not quote the request's address.
func TestTransportErrorQuotesNoAddress(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	c, err := binancepay.New(rails.ProviderConfig{BaseURL: srv.URL, Timeout: time.Second}, apiKey, secretKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.QueryOrder(context.Background(), "DEP-unreachable")
	if !errors.Is(err, rails.ErrOutcomeUnknown) || strings.Contains(err.Error(), host) || strings.Contains(err.Error(), "dial") {
		t.Fatalf("error %v; want an unknown outcome that quotes no address", err)
	}
}

// TestLongEchoedKeyIsRedactedWhole: a refusal that echoes the API key where
// the message is cut keeps no part of it.
func TestLongEchoedKeyIsRedactedWhole(t *testing.T) {
	c, _ := stub(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"FAIL","code":"400004","errorMessage":"` + strings.Repeat("x", 190) +
			r.Header.Get("BinancePay-Certificate-SN") + `"}`))
	})
	_, err := c.QueryOrder(context.Background(), "DEP-echo")
	if err == nil || strings.Contains(err.Error(), apiKey[:7]) {
		t.Fatalf("error %v quotes part of the key", err)
	}
}
