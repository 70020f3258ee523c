package server_test

import (
	"testing"
	"time"

	"merchantpay/internal/rails/binancepay/binancepayfake"
	"merchantpay/server/servertest"
)

// TestLiveProviderRefusalsAre4xx: a provider's definite refusal (Binance's
// FAIL, Paystack's 4xx when opening an account) is answered 422, not 503
// "try again": asking again the same way cannot succeed. An unclear answer
// stays 503.
func TestLiveProviderRefusalsAre4xx(t *testing.T) {
	f := startLiveFakes(t)
	opts := append(f.options("paystack,flutterwave,binancepay"), servertest.With("PAYSTACK_DVA_BANK", "no-such-bank"))
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Refused Co")

		// Paystack refuses a dedicated account at a bank it does not offer.
		r := e.REST("POST", "/accounts", m.LiveSecret, map[string]any{"account_type": "static_dynamic"})
		if r.Status != 422 || r.Code() != "RAIL_REFUSED" {
			t.Fatalf("refused live account: %d %s", r.Status, r.Body)
		}

		// Binance refuses every request outside its receive window (400003).
		e.GQL(m.LiveSecret, `mutation { enrolCryptoPay(input: {businessName: "Refused Co", logoUrl: "https://a.example/l.png", website: "https://a.example", successUrl: "https://a.example/ok", failureUrl: "https://a.example/ko"}) { status } }`, nil).GQLData()
		f.bp.SetWindow(-time.Hour)
		r = startDep(e, m.LiveSecret, directBody("Mug", "12.5", "USDT"))
		f.bp.SetWindow(binancepayfake.DefaultWindow)
		if r.Status != 422 || r.Code() != "RAIL_REFUSED" {
			t.Fatalf("refused checkout: %d %s", r.Status, r.Body)
		}
	}, opts...)
}
