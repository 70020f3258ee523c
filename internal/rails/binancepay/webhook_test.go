package binancepay_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"merchantpay/internal/clock"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/binancepay"
	"merchantpay/internal/rails/binancepay/binancepayfake"
)

// receiver serves as the service's webhook route: it verifies, reads and
// acknowledges, keeping what it read.
type receiver struct {
	c       *binancepay.Client
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

func listen(t *testing.T, c *binancepay.Client) (*receiver, string) {
	rc := &receiver{c: c}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv.URL
}

func TestPaidWebhookFromTheFake(t *testing.T) {
	ctx := context.Background()
	c, fake := setup(t)
	created, err := c.CreateOrder(ctx, order("DEP-hook"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Pay(created.TradeNo); err != nil {
		t.Fatal(err)
	}
	rc, url := listen(t, c)
	for range 2 {
		status, ack, err := fake.SendWebhook(ctx, url, created.TradeNo, "PAY_SUCCESS")
		if err != nil || status != http.StatusOK || string(ack) != `{"returnCode":"SUCCESS","returnMessage":null}` {
			t.Fatalf("delivery answered %d %s, %v", status, ack, err)
		}
	}
	if len(rc.notices) != 2 || rc.notices[0].Key != rc.notices[1].Key {
		t.Fatalf("a repeated delivery must carry the same key: %+v", rc.notices)
	}
	n := rc.notices[0]
	fo, _ := fake.Order(created.TradeNo)
	if n.Key != "PAY:"+created.ProviderReference+":PAY_SUCCESS" || n.Order == nil || n.Payout != nil || n.Inflow != nil {
		t.Fatalf("notice %+v", n)
	}
	want := rails.OrderNotice{TradeNo: created.TradeNo, ProviderReference: created.ProviderReference,
		Status: rails.OrderPaid, Amount: "25.17", Currency: "USDT", TransactionID: fo.TransactionID, At: fo.PaidAt}
	if *n.Order != want {
		t.Fatalf("order notice %+v, want %+v", *n.Order, want)
	}
	if got := fake.CertificateRequests(); got != 1 {
		t.Fatalf("certificates fetched %d times, want once then cached", got)
	}
}

func TestClosedWebhookAndOtherEvents(t *testing.T) {
	ctx := context.Background()
	c, fake := setup(t)
	created, err := c.CreateOrder(ctx, order("DEP-close"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := fake.WebhookBody(created.TradeNo, "PAY_CLOSED")
	if err != nil {
		t.Fatal(err)
	}
	ns, err := c.Notices(body)
	if err != nil || len(ns) != 1 || ns[0].Order == nil || ns[0].Order.Status != rails.OrderClosed {
		t.Fatalf("notices %+v, %v", ns, err)
	}
	// bizId beyond 2^53 without bizIdStr keeps its digits exactly.
	ns, err = c.Notices([]byte(`{"bizType":"PAY_REFUND","bizId":29383937493038367,"bizStatus":"REFUND_SUCCESS","data":"{}"}`))
	if err != nil || len(ns) != 1 || ns[0].Key != "PAY_REFUND:29383937493038367:REFUND_SUCCESS" || ns[0].Order != nil {
		t.Fatalf("notices %+v, %v", ns, err)
	}
	// bizIdStr is what counts when a sender rounded bizId.
	ns, err = c.Notices([]byte(`{"bizType":"PAY_REFUND","bizId":1.2e17,"bizIdStr":"120000000000000001","bizStatus":"REFUND_SUCCESS","data":"{}"}`))
	if err != nil || len(ns) != 1 || ns[0].Key != "PAY_REFUND:120000000000000001:REFUND_SUCCESS" {
		t.Fatalf("notices %+v, %v", ns, err)
	}
	for _, bad := range []string{`nope`, `{"bizType":"PAY","bizIdStr":"1","bizStatus":"PAY_SUCCESS","data":"not json"}`,
		`{"bizType":"PAY","bizIdStr":"1","bizStatus":"PAY_SUCCESS","data":"{\"merchantTradeNo\":\"A\",\"totalFee\":\"1e\"}"}`} {
		if _, err := c.Notices([]byte(bad)); err == nil {
			t.Errorf("Notices(%s) took a bad body", bad)
		}
	}
}

func TestBadWebhooksAreRefused(t *testing.T) {
	ctx := context.Background()
	c, fake := setup(t)
	created, err := c.CreateOrder(ctx, order("DEP-bad"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := fake.WebhookBody(created.TradeNo, "PAY_SUCCESS")
	good := fake.SignWebhook(body, time.Now())
	if err := c.Verify(ctx, good, body); err != nil {
		t.Fatalf("a good delivery was refused: %v", err)
	}
	other := binancepayfake.New(apiKey, secretKey)
	forged := other.SignWebhook(body, time.Now())
	forged.Set("BinancePay-Certificate-SN", fake.Serial())
	missing := good.Clone()
	missing.Del("BinancePay-Nonce")
	for name, tc := range map[string]struct {
		h    http.Header
		body []byte
	}{
		"changed body":       {good, append([]byte(" "), body...)},
		"signed by another":  {forged, body},
		"missing nonce":      {missing, body},
		"stale timestamp":    {fake.SignWebhook(body, time.Now().Add(-6*time.Minute)), body},
		"future timestamp":   {fake.SignWebhook(body, time.Now().Add(6*time.Minute)), body},
		"signature not b64":  {withHeader(good, "BinancePay-Signature", "***"), body},
		"timestamp not a ms": {withHeader(good, "BinancePay-Timestamp", "soon"), body},
	} {
		if err := c.Verify(ctx, tc.h, tc.body); !errors.Is(err, binancepay.ErrBadSignature) {
			t.Errorf("%s: Verify = %v", name, err)
		}
	}
	if got := fake.CertificateRequests(); got != 1 {
		t.Fatalf("certificates fetched %d times; refusals must not fetch again", got)
	}
}

func withHeader(h http.Header, k, v string) http.Header {
	h = h.Clone()
	h.Set(k, v)
	return h
}

func TestUnknownSerialIsFetchedOnceAndLimited(t *testing.T) {
	ctx := context.Background()
	c, fake := setup(t)
	fake.SetWindow(time.Hour) // the client's clock is moved below
	clk := clock.NewFake(time.Now())
	c.Clock = clk
	created, err := c.CreateOrder(ctx, order("DEP-rotate"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := fake.WebhookBody(created.TradeNo, "PAY_SUCCESS")
	if err := c.Verify(ctx, fake.SignWebhook(body, clk.Now()), body); err != nil {
		t.Fatal(err)
	}
	// Binance rotates its key: the new serial is fetched once.
	fake.RotateKey()
	fake.ServeRSAPublicKey(true)
	clk.Advance(binancepay.RefetchGap)
	if err := c.Verify(ctx, fake.SignWebhook(body, clk.Now()), body); err != nil {
		t.Fatalf("after a key rotation: %v", err)
	}
	if got := fake.CertificateRequests(); got != 2 {
		t.Fatalf("certificates fetched %d times, want 2", got)
	}
	// A forged serial makes one fetch, then none for a while.
	clk.Advance(binancepay.RefetchGap)
	for i := range 5 {
		h := withHeader(fake.SignWebhook(body, clk.Now()), "BinancePay-Certificate-SN", "forged")
		if err := c.Verify(ctx, h, body); !errors.Is(err, binancepay.ErrUnknownCertificate) {
			t.Fatalf("try %d with a forged serial: %v", i, err)
		}
	}
	h := withHeader(fake.SignWebhook(body, clk.Now()), "BinancePay-Certificate-SN", "forged-too")
	if err := c.Verify(ctx, h, body); !errors.Is(err, binancepay.ErrUnknownCertificate) {
		t.Fatalf("another forged serial at once: %v", err)
	}
	if got := fake.CertificateRequests(); got != 3 {
		t.Fatalf("certificates fetched %d times, want 3 (one for the forged serials)", got)
	}
	clk.Advance(binancepay.RefetchGap)
	h = withHeader(fake.SignWebhook(body, clk.Now()), "BinancePay-Certificate-SN", "forged")
	if err := c.Verify(ctx, h, body); !errors.Is(err, binancepay.ErrUnknownCertificate) || fake.CertificateRequests() != 3 {
		t.Fatalf("the forged serial within a minute: %v, %d fetches", err, fake.CertificateRequests())
	}
	clk.Advance(binancepay.RefetchPerSerial - binancepay.RefetchGap)
	h = withHeader(fake.SignWebhook(body, clk.Now()), "BinancePay-Certificate-SN", "forged")
	_ = c.Verify(ctx, h, body)
	if got := fake.CertificateRequests(); got != 4 {
		t.Fatalf("certificates fetched %d times, want 4 (the forged serial again after the wait)", got)
	}
	// The known key still verifies without any fetch.
	if err := c.Verify(ctx, fake.SignWebhook(body, clk.Now()), body); err != nil || fake.CertificateRequests() != 4 {
		t.Fatalf("known serial: %v, %d fetches", err, fake.CertificateRequests())
	}
}

func TestParsePublicKeyForms(t *testing.T) {
	fake := binancepayfake.Start(apiKey, secretKey)
	defer fake.Close()
	for _, rsaForm := range []bool{false, true} {
		fake.ServeRSAPublicKey(rsaForm)
		c, err := binancepay.New(rails.ProviderConfig{BaseURL: fake.URL()}, apiKey, secretKey)
		if err != nil {
			t.Fatal(err)
		}
		body := []byte(`{"bizType":"PAY","bizIdStr":"1","bizStatus":"PAY_CLOSED","data":"{}"}`)
		if err := c.Verify(context.Background(), fake.SignWebhook(body, time.Now()), body); err != nil {
			t.Fatalf("RSA PUBLIC KEY form %v: %v", rsaForm, err)
		}
	}
	if _, err := binancepay.ParsePublicKey("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"); err == nil {
		t.Fatal("a certificate block was taken as a public key")
	}
}
