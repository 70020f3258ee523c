package pricing_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"merchantpay/internal/money"
	"merchantpay/internal/pricing"
)

// Quote arithmetic as POST /rates/create runs it: the rate from the mid and
// spread, then the quote for a fixed from_amount or to_amount.
func BenchmarkQuoteFromAmount(b *testing.B) {
	mid, spread := decimal.RequireFromString("1600"), decimal.RequireFromString("0.005")
	fee := pricing.FeeSpec{Type: pricing.Percentage, Value: decimal.RequireFromString("0.5")}
	b.ReportAllocs()
	for b.Loop() {
		rate := pricing.Rate(mid, spread, pricing.Sell)
		if _, err := pricing.QuoteFromAmount(money.USDT, money.NGN, pricing.Sell, rate, fee, 10_000_000); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQuoteToAmount(b *testing.B) {
	mid, spread := decimal.RequireFromString("1600"), decimal.RequireFromString("0.005")
	fee := pricing.FeeSpec{Type: pricing.Flat, Value: decimal.RequireFromString("100")}
	b.ReportAllocs()
	for b.Loop() {
		rate := pricing.Rate(mid, spread, pricing.Buy)
		if _, err := pricing.QuoteToAmount(money.NGN, money.USDT, pricing.Buy, rate, fee, 10_000_000); err != nil {
			b.Fatal(err)
		}
	}
}
