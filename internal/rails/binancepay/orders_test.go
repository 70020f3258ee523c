package binancepay_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/binancepay"
	"merchantpay/internal/rails/binancepay/binancepayfake"
)

const (
	apiKey    = "bp-api-key-0123456789"
	secretKey = "bp-secret-key-abcdefghijklmnop"
)

func setup(t *testing.T) (*binancepay.Client, *binancepayfake.Fake) {
	t.Helper()
	fake := binancepayfake.Start(apiKey, secretKey)
	t.Cleanup(fake.Close)
	c, err := binancepay.New(rails.ProviderConfig{BaseURL: fake.URL(), Timeout: 300 * time.Millisecond}, apiKey, secretKey)
	if err != nil {
		t.Fatal(err)
	}
	return c, fake
}

func order(ref string) rails.CryptoOrder {
	return rails.CryptoOrder{Reference: ref, Amount: "25.17", Currency: "USDT", Description: "Deposit to Acme",
		ExpiresAt: time.Now().Add(30 * time.Minute).Truncate(time.Millisecond), WebhookURL: "https://merchantpay.example/rails/binancepay/webhook"}
}

// The computed vector of the shared provider notes.
func TestSignVector(t *testing.T) {
	got := binancepay.Sign("fake_secret", "1700000000000", "abcdefghijklmnopqrstuvwxyzABCDEF", []byte(`{"merchantTradeNo":"ORDER0001"}`))
	const want = "2658D57E503196E152714F75AA649096C09C52FA0E523E67AE579DE133D2FBBE3031C041BD48E8396211B27554F90674BEB1176127BF410CF91E1847EE66A6BB"
	if got != want {
		t.Fatalf("signature\n%s\nwant\n%s", got, want)
	}
	if n := binancepay.Nonce(); !regexp.MustCompile(`^[A-Za-z]{32}$`).MatchString(n) || n == binancepay.Nonce() {
		t.Fatalf("nonce %q", n)
	}
}

func TestTradeNo(t *testing.T) {
	ref := "DEP-0b9f4a4e-8c3e-4f0e-9d1a-2b7e5c6d7e8f"
	got := binancepay.TradeNo(ref)
	if !regexp.MustCompile(`^DEP[0-9A-F]{29}$`).MatchString(got) || got != binancepay.TradeNo(ref) {
		t.Fatalf("TradeNo(%q) = %q", ref, got)
	}
	if got == binancepay.TradeNo("DEP-0b9f4a4e-8c3e-4f0e-9d1a-2b7e5c6d7e8e") || got == binancepay.TradeNo("DEP0b9f4a4e8c3e4f0e9d1a2b7e5c6d7e8f") {
		t.Fatal("different references derive one trade number")
	}
	if got := binancepay.TradeNo("ORDER0001"); got != "ORDER0001" {
		t.Fatalf("a trade number of letters and digits is kept: %q", got)
	}
	if got := binancepay.TradeNo("---"); !regexp.MustCompile(`^[0-9A-F]{32}$`).MatchString(got) {
		t.Fatalf("TradeNo(---) = %q", got)
	}
}

func TestCreateOrderSendsSignedFields(t *testing.T) {
	c, fake := setup(t)
	o := order("DEP-create-1")
	created, err := c.CreateOrder(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	tradeNo := binancepay.TradeNo("DEP-create-1")
	fo, ok := fake.Order(tradeNo)
	if !ok || created.TradeNo != tradeNo || created.ProviderReference != fo.PrepayID || created.CheckoutURL == "" ||
		created.QRContent == "" || created.QRCodeLink == "" || created.Deeplink == "" || created.UniversalURL == "" ||
		!created.ExpiresAt.Equal(o.ExpiresAt) {
		t.Fatalf("created %+v, fake order %+v", created, fo)
	}
	if id, _ := strconv.ParseUint(created.ProviderReference, 10, 64); id <= 1<<53 {
		t.Fatalf("the fake's prepayId %s should exceed 2^53 and be kept exactly", created.ProviderReference)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/binancepay/openapi/v3/order" {
		t.Fatalf("requests %+v", reqs)
	}
	r := reqs[0]
	checkSigned(t, r)
	var body map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"env": `{"terminalType":"WEB"}`, "merchantTradeNo": `"` + tradeNo + `"`, "orderAmount": `25.17`,
		"currency": `"USDT"`, "description": `"Deposit to Acme"`,
		"goodsDetails":    `[{"goodsType":"02","goodsCategory":"Z000","referenceGoodsId":"` + tradeNo + `","goodsName":"Deposit to Acme"}]`,
		"orderExpireTime": strconv.FormatInt(o.ExpiresAt.UnixMilli(), 10),
		"webhookUrl":      `"https://merchantpay.example/rails/binancepay/webhook"`,
	}
	for k, v := range want {
		if string(body[k]) != v {
			t.Errorf("field %s = %s, want %s", k, body[k], v)
		}
	}
	if len(body) != len(want) {
		t.Errorf("body has %d fields, want %d: %s", len(body), len(want), r.Body)
	}
}

// checkSigned checks a request's headers field by field against the
// documented scheme, independently of the fake.
func checkSigned(t *testing.T, r binancepayfake.Request) {
	t.Helper()
	ts, nonce := r.Header.Get("BinancePay-Timestamp"), r.Header.Get("BinancePay-Nonce")
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.UnixMilli(ms)).Abs() > 10*time.Second {
		t.Errorf("timestamp %q is not now in milliseconds", ts)
	}
	if len(nonce) != 32 {
		t.Errorf("nonce %q is not 32 characters", nonce)
	}
	if got := r.Header.Get("BinancePay-Certificate-SN"); got != apiKey {
		t.Errorf("certificate SN %q", got)
	}
	if got := r.Header.Get("BinancePay-Signature"); got != binancepay.Sign(secretKey, ts, nonce, r.Body) {
		t.Errorf("signature %q does not sign the bytes sent", got)
	}
	if r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("content type %q", r.Header.Get("Content-Type"))
	}
}

func TestCreateOrderRefusesBadInputUnsent(t *testing.T) {
	c, fake := setup(t)
	_, err := c.CreateOrder(context.Background(), rails.CryptoOrder{Reference: "DEP-x", Amount: "1.000000001", Currency: "ngn", WebhookURL: "ftp://x"})
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Kind != apperr.Validation || len(ae.Fields) != 3 {
		t.Fatalf("want a validation error naming amount, currency and webhook_url, got %v", err)
	}
	if len(fake.Requests()) != 0 {
		t.Fatal("a bad order reached Binance")
	}
}

func TestDuplicateTradeNo(t *testing.T) {
	c, _ := setup(t)
	if _, err := c.CreateOrder(context.Background(), order("DEP-dup")); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateOrder(context.Background(), order("DEP-dup"))
	if !errors.Is(err, binancepay.ErrDuplicateTradeNo) || strings.Contains(err.Error(), secretKey) || strings.Contains(err.Error(), apiKey) {
		t.Fatalf("error %v", err)
	}
}

func TestOrderLifecycle(t *testing.T) {
	ctx := context.Background()
	c, fake := setup(t)
	if _, err := c.QueryOrder(ctx, "DEP-life"); !errors.Is(err, rails.ErrNoRecord) {
		t.Fatalf("query before create: %v", err)
	}
	if err := c.CloseOrder(ctx, "DEP-life"); !errors.Is(err, rails.ErrNoRecord) {
		t.Fatalf("close before create: %v", err)
	}
	for _, ref := range []string{"DEP-life", "DEP-closed", "DEP-expired"} {
		if _, err := c.CreateOrder(ctx, order(ref)); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.QueryOrder(ctx, "DEP-life")
	if err != nil || st.Status != rails.OrderPending || st.Amount != "25.17" || st.Currency != "USDT" {
		t.Fatalf("pending order %+v, %v", st, err)
	}
	if err := fake.Pay(binancepay.TradeNo("DEP-life")); err != nil {
		t.Fatal(err)
	}
	st, err = c.QueryOrder(ctx, "DEP-life")
	if err != nil || st.Status != rails.OrderPaid || st.TransactionID == "" || st.PaidAt.IsZero() {
		t.Fatalf("paid order %+v, %v", st, err)
	}
	var ae *binancepay.APIError
	if err := c.CloseOrder(ctx, "DEP-life"); !errors.As(err, &ae) || ae.Code != binancepay.CodeInvalidOrderStatus {
		t.Fatalf("closing a paid order: %v", err)
	}
	if err := c.CloseOrder(ctx, "DEP-closed"); err != nil {
		t.Fatal(err)
	}
	if st, err := c.QueryOrder(ctx, "DEP-closed"); err != nil || st.Status != rails.OrderClosed {
		t.Fatalf("closed order %+v, %v", st, err)
	}
	if err := fake.Expire(binancepay.TradeNo("DEP-expired")); err != nil {
		t.Fatal(err)
	}
	if st, err := c.QueryOrder(ctx, "DEP-expired"); err != nil || st.Status != rails.OrderExpired {
		t.Fatalf("expired order %+v, %v", st, err)
	}
	for _, r := range fake.Requests() {
		checkSigned(t, r)
	}
	last := fake.Requests()[len(fake.Requests())-1]
	if last.Path != "/binancepay/openapi/v2/order/query" || string(last.Body) != `{"merchantTradeNo":"`+binancepay.TradeNo("DEP-expired")+`"}` {
		t.Fatalf("query request %s %s", last.Path, last.Body)
	}
}

func TestTimeoutThenQueryFindsTheOrder(t *testing.T) {
	ctx := context.Background()
	for _, fl := range []binancepayfake.Failure{binancepayfake.TimeoutAfter, binancepayfake.ServerErrorAfter} {
		c, fake := setup(t)
		fake.FailNext(fl)
		if _, err := c.CreateOrder(ctx, order("DEP-lost")); !errors.Is(err, rails.ErrOutcomeUnknown) {
			t.Fatalf("failure %d: want ErrOutcomeUnknown, got %v", fl, err)
		}
		st, err := c.QueryOrder(ctx, "DEP-lost")
		if err != nil || st.Status != rails.OrderPending || len(fake.Orders()) != 1 {
			t.Fatalf("failure %d: query %+v, %v, %d orders", fl, st, err, len(fake.Orders()))
		}
	}
	c, fake := setup(t)
	fake.FailNext(binancepayfake.TimeoutBefore)
	if err := c.CloseOrder(ctx, "DEP-any"); !errors.Is(err, rails.ErrOutcomeUnknown) || strings.Contains(err.Error(), secretKey) {
		t.Fatalf("close timing out: %v", err)
	}
}

func TestRefusedSignatureIsAnErrorWithoutKeys(t *testing.T) {
	fake := binancepayfake.Start(apiKey, "another-secret")
	defer fake.Close()
	c, err := binancepay.New(rails.ProviderConfig{BaseURL: fake.URL()}, apiKey, secretKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.QueryOrder(context.Background(), "DEP-sig")
	var ae *binancepay.APIError
	if !errors.As(err, &ae) || ae.Code != "400002" || errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("want FAIL 400002, got %v", err)
	}
	if strings.Contains(err.Error(), secretKey) || strings.Contains(err.Error(), apiKey) {
		t.Fatalf("error carries a key: %v", err)
	}
}

// A provider that echoes the request's credentials must not carry them
// into our errors.
func TestEchoedKeyIsRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"FAIL","code":"400004","errorMessage":"unknown key ` + r.Header.Get("BinancePay-Certificate-SN") + `"}`))
	}))
	defer srv.Close()
	c, err := binancepay.New(rails.ProviderConfig{BaseURL: srv.URL}, apiKey, secretKey)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.QueryOrder(context.Background(), "DEP-echo")
	if err == nil || strings.Contains(err.Error(), apiKey) || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("error %v", err)
	}
}

func TestQueryStatusMapping(t *testing.T) {
	ctx := context.Background()
	c, fake := setup(t)
	if _, err := c.CreateOrder(ctx, order("DEP-map")); err != nil {
		t.Fatal(err)
	}
	tradeNo := binancepay.TradeNo("DEP-map")
	for status, want := range map[string]string{"INITIAL": rails.OrderPending, "PENDING": rails.OrderPending,
		"PAID": rails.OrderPaid, "CANCELED": rails.OrderClosed, "EXPIRED": rails.OrderExpired, "ERROR": rails.OrderFailed,
		"REFUNDED": ""} {
		if err := fake.SetStatus(tradeNo, status); err != nil {
			t.Fatal(err)
		}
		st, err := c.QueryOrder(ctx, "DEP-map")
		if want == "" {
			if err == nil {
				t.Errorf("%s: taken as %q; a refund made elsewhere must reach an operator", status, st.Status)
			}
			continue
		}
		if err != nil || st.Status != want {
			t.Errorf("%s: %+v, %v; want %s", status, st, err, want)
		}
	}
}

// An order priced in fiat (NGN, USD) is sent as fiatAmount and fiatCurrency,
// which Binance documents as setting the order's currency to USDT; the
// order is then reported in USDT.
func TestCreateOrderInFiat(t *testing.T) {
	c, fake := setup(t)
	for _, cur := range []string{"NGN", "USD"} {
		o := order("DEP-fiat-" + cur)
		o.Amount, o.Currency = "1000", cur
		if _, err := c.CreateOrder(context.Background(), o); err != nil {
			t.Fatalf("%s: %v", cur, err)
		}
		var body map[string]json.RawMessage
		reqs := fake.Requests()
		if err := json.Unmarshal(reqs[len(reqs)-1].Body, &body); err != nil {
			t.Fatal(err)
		}
		if string(body["fiatAmount"]) != "1000" || string(body["fiatCurrency"]) != `"`+cur+`"` {
			t.Errorf("%s: fiatAmount %s fiatCurrency %s", cur, body["fiatAmount"], body["fiatCurrency"])
		}
		if _, ok := body["orderAmount"]; ok {
			t.Errorf("%s: orderAmount sent with the fiat pair", cur)
		}
		if _, ok := body["currency"]; ok {
			t.Errorf("%s: currency sent with the fiat pair", cur)
		}
		st, err := c.QueryOrder(context.Background(), o.Reference)
		if err != nil || st.Currency != binancepay.FiatOrderCurrency || st.Amount == "" {
			t.Errorf("%s: query %+v %v", cur, st, err)
		}
	}
}
