package flutterwave_test

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/flutterwave"
)

// The computed vector of the shared provider notes (not from Flutterwave's
// docs): base64 HMAC-SHA256 of the body under the secret hash.
func TestSignatureVector(t *testing.T) {
	body := []byte(`{"type":"transfer.disburse","data":{"reference":"payout0001","status":"SUCCESSFUL"}}`)
	got := base64.StdEncoding.EncodeToString(flutterwave.Signature("my_secret_hash", body))
	if got != "w8iWestjbWEbmRNoHW53Fh5orYOsSRFNmLN+Hk+2rog=" {
		t.Fatalf("signature %s", got)
	}
	c, _ := setup(t)
	h := http.Header{}
	h.Set("flutterwave-signature", got)
	if err := c.Verify(context.Background(), h, body); err != nil {
		t.Fatalf("a valid flutterwave-signature was refused: %v", err)
	}
	if err := c.Verify(context.Background(), h, append(body, ' ')); !errors.Is(err, flutterwave.ErrBadSignature) {
		t.Fatalf("a changed body was accepted: %v", err)
	}
}

func TestVerifyHash(t *testing.T) {
	c, _ := setup(t)
	body := []byte(`{"event":"transfer.completed","data":{}}`)
	for _, tc := range []struct {
		name   string
		header http.Header
		ok     bool
	}{
		{"right hash", http.Header{"Verif-Hash": {hash}}, true},
		{"wrong hash", http.Header{"Verif-Hash": {hash + "x"}}, false},
		{"hash prefix", http.Header{"Verif-Hash": {hash[:4]}}, false},
		{"no header", http.Header{}, false},
		{"garbage signature", http.Header{"Flutterwave-Signature": {"not base64!"}}, false},
		{"signature under another key", http.Header{"Flutterwave-Signature": {
			base64.StdEncoding.EncodeToString(flutterwave.Signature("other", body))}}, false},
	} {
		err := c.Verify(context.Background(), tc.header, body)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Verify = %v", tc.name, err)
		}
	}
}

// receiver serves as the service's webhook route: it verifies, reads and
// acknowledges, keeping what it read.
type receiver struct {
	c       *flutterwave.Client
	mu      sync.Mutex
	notices []rails.Notice
	refused int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := rc.c.Verify(r.Context(), r.Header, body); err != nil {
		rc.mu.Lock()
		rc.refused++
		rc.mu.Unlock()
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	ns, err := rc.c.Notices(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.notices = append(rc.notices, ns...)
	rc.mu.Unlock()
	ct, ack := rc.c.Ack()
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(ack)
}

func TestWebhookFromTheFake(t *testing.T) {
	c, fake := setup(t)
	p := ghPayout("WTH-hook", 123456)
	sub, err := c.SubmitPayout(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Complete("WTH-hook", "FAILED", "DISBURSE FAILED: Insufficient funds"); err != nil {
		t.Fatal(err)
	}
	rc := &receiver{c: c}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	for range 2 {
		status, _, err := fake.SendWebhook(context.Background(), srv.URL, "WTH-hook")
		if err != nil || status != http.StatusOK {
			t.Fatalf("delivery answered %d, %v", status, err)
		}
	}
	if len(rc.notices) != 2 || rc.notices[0].Key != rc.notices[1].Key {
		t.Fatalf("a repeated delivery must carry the same key: %+v", rc.notices)
	}
	n := rc.notices[0]
	want := rails.PayoutNotice{ProviderReference: "WTH-hook", ProviderID: sub.RailsReference,
		Status: rails.PayoutFailed, Amount: 123456, Currency: money.GHS, Reason: "DISBURSE FAILED: Insufficient funds"}
	if n.Payout == nil || *n.Payout != want || n.Inflow != nil || n.Order != nil {
		t.Fatalf("notice %+v, want payout %+v", n, want)
	}
	if n.Key != "transfer.completed:"+sub.RailsReference+":FAILED" {
		t.Fatalf("key %q", n.Key)
	}
}

func TestNoticesOfOtherEventsAndBadBodies(t *testing.T) {
	c, _ := setup(t)
	ns, err := c.Notices([]byte(`{"event":"charge.completed","data":{"id":99,"status":"successful"}}`))
	if err != nil || len(ns) != 1 || ns[0].Key != "charge.completed:99" || ns[0].Payout != nil {
		t.Fatalf("notices %+v, %v", ns, err)
	}
	for _, body := range []string{
		`not json`,
		`{"event":"transfer.completed","data":{"id":1,"reference":"r","status":"SUCCESSFUL","amount":1.234,"currency":"GHS"}}`,
		`{"event":"transfer.completed","data":{"id":1,"reference":"r","status":"WEIRD","amount":1,"currency":"GHS"}}`,
		`{"event":"transfer.completed","data":{"reference":"r","status":"SUCCESSFUL","amount":1,"currency":"GHS"}}`,
	} {
		if _, err := c.Notices([]byte(body)); err == nil {
			t.Errorf("Notices(%s) took a bad body", body)
		}
	}
	ns, err = c.Notices([]byte(`{"event":"transfer.completed","data":{"id":7,"reference":"r","status":"SUCCESSFUL","amount":0.29,"currency":"GHS"}}`))
	if err != nil || ns[0].Payout.Amount != 29 || ns[0].Payout.Status != rails.PayoutSucceeded {
		t.Fatalf("notices %+v, %v", ns, err)
	}
}

func TestWebhookWithAWrongHashIsRefused(t *testing.T) {
	c, fake := setup(t)
	if _, err := c.SubmitPayout(context.Background(), ghPayout("WTH-x", 1)); err != nil {
		t.Fatal(err)
	}
	other, err := flutterwave.New(rails.ProviderConfig{BaseURL: fake.URL()}, secretKey, "another hash")
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{c: other}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	status, _, err := fake.SendWebhook(context.Background(), srv.URL, "WTH-x")
	if err != nil || status != http.StatusUnauthorized || rc.refused != 1 || len(rc.notices) != 0 {
		t.Fatalf("delivery under another hash answered %d (%v), refused %d, notices %d", status, err, rc.refused, len(rc.notices))
	}
}

// Flutterwave v3 has no "reversed" status: a transfer reported SUCCESSFUL
// and later FAILED is a reversal, and the second delivery must not be taken
// for a repeat of the first.
func TestFailureAfterSuccessHasItsOwnKey(t *testing.T) {
	c, fake := setup(t)
	if _, err := c.SubmitPayout(context.Background(), ghPayout("WTH-rev", 900)); err != nil {
		t.Fatal(err)
	}
	rc := &receiver{c: c}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	for _, st := range []string{"SUCCESSFUL", "FAILED"} {
		if err := fake.Complete("WTH-rev", st, "status "+st); err != nil {
			t.Fatal(err)
		}
		if status, _, err := fake.SendWebhook(context.Background(), srv.URL, "WTH-rev"); err != nil || status != 200 {
			t.Fatalf("delivery answered %d, %v", status, err)
		}
	}
	if len(rc.notices) != 2 || rc.notices[0].Key == rc.notices[1].Key ||
		rc.notices[0].Payout.Status != rails.PayoutSucceeded || rc.notices[1].Payout.Status != rails.PayoutFailed {
		t.Fatalf("notices %+v", rc.notices)
	}
}
