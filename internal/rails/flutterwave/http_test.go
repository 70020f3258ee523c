package flutterwave_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/rails"
	"merchantpay/internal/rails/flutterwave"
)

// stub answers the look-up by reference with an empty list (Flutterwave has
// no record), hands POST /v3/transfers and GET /v3/transfers/77 to answer,
// and counts the requests that reach /moved, which refuses with
// Flutterwave's error envelope.
func stub(t *testing.T, answer http.HandlerFunc) (*flutterwave.Client, *int, *int) {
	t.Helper()
	var posts, moved int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/moved":
			moved++
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"status":"error","message":"No transfer found","data":null}`))
		case r.Method == http.MethodPost || r.URL.Path == "/v3/transfers/77":
			if r.Method == http.MethodPost {
				posts++
			}
			answer(w, r)
		default:
			_, _ = w.Write([]byte(`{"status":"success","message":"Transfers fetched","data":[]}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := flutterwave.New(rails.ProviderConfig{BaseURL: srv.URL, Timeout: time.Second}, secretKey, hash)
	if err != nil {
		t.Fatal(err)
	}
	return c, &posts, &moved
}

// TestRedirectIsNeverFollowed: a redirect of the submission or of the
// look-up is an unknown outcome, never followed (the refusal at its target
// would read as a failed payout and refund a withdrawal that may be paid).
func TestRedirectIsNeverFollowed(t *testing.T) {
	for _, code := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		c, posts, moved := stub(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/moved", code)
		})
		res, err := c.SubmitPayout(context.Background(), ghPayout("WTH-redirected", 100))
		if !errors.Is(err, rails.ErrOutcomeUnknown) || res.Status == rails.PayoutFailed {
			t.Fatalf("HTTP %d to the submission: %+v, %v; want an unknown outcome", code, res, err)
		}
		res, err = c.CheckPayout(context.Background(), rails.PayoutQuery{Payout: ghPayout("WTH-redirected", 100), RailsReference: "77"})
		if !errors.Is(err, rails.ErrOutcomeUnknown) || res.Status == rails.PayoutFailed {
			t.Fatalf("HTTP %d to the look-up: %+v, %v; want an unknown outcome", code, res, err)
		}
		if *moved != 0 || *posts != 1 {
			t.Fatalf("HTTP %d: %d requests followed the redirect, %d submissions", code, *moved, *posts)
		}
	}
}

// TestTooManyRequestsIsUnknown: a 429, even with Flutterwave's error
// envelope, says nothing certain: no failed payout, no second submission.
func TestTooManyRequestsIsUnknown(t *testing.T) {
	c, posts, _ := stub(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"status":"error","message":"Too many requests","data":null}`))
	})
	res, err := c.SubmitPayout(context.Background(), ghPayout("WTH-busy", 100))
	if !errors.Is(err, rails.ErrOutcomeUnknown) || res.Status == rails.PayoutFailed || !strings.Contains(err.Error(), "HTTP 429") {
		t.Fatalf("429 to the submission: %+v, %v; want an unknown outcome", res, err)
	}
	_, err = c.CheckPayout(context.Background(), rails.PayoutQuery{Payout: ghPayout("WTH-busy", 100), RailsReference: "77"})
	if !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("429 to the look-up: %v; want an unknown outcome", err)
	}
	if *posts != 1 {
		t.Fatalf("%d submissions, want 1", *posts)
	}
}

// TestTransportErrorQuotesNoAddress: a failed connection is an unknown
// outcome whose text does not quote the request's address or query.
func TestTransportErrorQuotesNoAddress(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	c, err := flutterwave.New(rails.ProviderConfig{BaseURL: srv.URL, Timeout: time.Second}, secretKey, hash)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SubmitPayout(context.Background(), ghPayout("WTH-unreachable", 100))
	if !errors.Is(err, rails.ErrOutcomeUnknown) || strings.Contains(err.Error(), host) || strings.Contains(err.Error(), "dial") {
		t.Fatalf("error %v; want an unknown outcome that quotes no address", err)
	}
}

// TestLongEchoedKeyIsRedactedWhole: a refusal that echoes the key where the
// message is cut keeps no part of it.
func TestLongEchoedKeyIsRedactedWhole(t *testing.T) {
	c, _, _ := stub(t, func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"error","message":"` + strings.Repeat("x", 190) + key + `","data":null}`))
	})
	_, err := c.CheckPayout(context.Background(), rails.PayoutQuery{Payout: ghPayout("WTH-echo", 100), RailsReference: "77"})
	if err == nil || strings.Contains(err.Error(), secretKey[:7]) {
		t.Fatalf("error %v quotes part of the key", err)
	}
}
