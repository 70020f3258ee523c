package server_test

import (
	"context"
	"testing"

	"merchantpay/ent/transaction"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/rails/binancepay"
	"merchantpay/internal/tenant"
	"merchantpay/server/servertest"
)

// TestLiveCryptoPayInFiat: on Binance Pay, a direct crypto-pay deposit in a
// fiat currency (NGN, USD) and a cross deposit paid in NGN are made as
// orders priced in fiat (fiatAmount and fiatCurrency), which Binance turns
// into USDT orders; paid, each credits what the service priced.
func TestLiveCryptoPayInFiat(t *testing.T) {
	f := startLiveFakes(t)
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Fiat Co")
		ctx := tenant.System(context.Background())
		hook := e.URL + "/rails/binancepay/webhook"
		e.GQL(m.LiveSecret, `mutation { enrolCryptoPay(input: {businessName: "Fiat Co", logoUrl: "https://a.example/l.png", website: "https://a.example", successUrl: "https://a.example/ok", failureUrl: "https://a.example/ko"}) { status } }`, nil).GQLData()

		pay := func(links map[string]any, fiat, amount string) string {
			t.Helper()
			row, err := e.App.DB.Reader().Transaction.Query().Where(transaction.PrepayID(links["prepayId"].(string))).Only(ctx)
			if err != nil {
				t.Fatal(err)
			}
			o, ok := f.bp.Order(binancepay.TradeNo(row.Reference))
			if !ok || o.FiatCurrency != fiat || o.FiatAmount != amount || o.Currency != "USDT" || o.Amount == "" {
				t.Fatalf("Binance order %+v for a deposit of %s %s", o, amount, fiat)
			}
			if err := f.bp.Pay(o.MerchantTradeNo); err != nil {
				t.Fatal(err)
			}
			if status, b, err := f.bp.SendWebhook(context.Background(), hook, o.MerchantTradeNo, "PAY_SUCCESS"); err != nil || status != 200 {
				t.Fatalf("PAY_SUCCESS: %v %d %s", err, status, b)
			}
			return row.Reference
		}

		ngn := pay(startDep(e, m.LiveSecret, directBody("Mug", "1000", "NGN")).Expect(200).Data(), "NGN", "1000")
		usd := pay(startDep(e, m.LiveSecret, directBody("Mug", "5", "USD")).Expect(200).Data(), "USD", "5")
		q := createQuote(e, m.LiveSecret, map[string]any{"from_currency": "NGN", "to_currency": "USDT", "from_amount": 20000,
			"transaction_type": "deposit", "deposit_method": "crypto-pay"})
		cross := pay(startDep(e, m.LiveSecret, map[string]any{"deposit_method": "crypto-pay", "rate_reference": q["reference"],
			"fee_bearer": "beneficiary", "requirement": map[string]any{"product_name": "Big Order"}}).Expect(200).Data(), "NGN", "20000")

		for _, ref := range []string{ngn, usd, cross} {
			if row := waitStatus(t, e, ref, "success"); row.RailsFlag != nil {
				t.Fatalf("%s flagged: %s", ref, *row.RailsFlag)
			}
		}
		for cur, ref := range map[money.Currency]string{money.NGN: ngn, money.USD: usd, money.USDT: cross} {
			if got, want := liveBalance(t, e, m, cur), txByRef(t, e, ref).AmountSettled; got != want || got <= 0 {
				t.Errorf("%s balance %d, want %d", cur, got, want)
			}
		}
		if err := ledger.Check(context.Background(), e.App.DB); err != nil {
			t.Fatal(err)
		}
	}, f.options("paystack,flutterwave,binancepay")...)
}
