package server_test

import (
	"testing"

	"merchantpay/server/servertest"
)

func TestGraphQLRates(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		list := e.GQL(m.TestSecret, `{ rates { pair buy { rate market fromCurrency toCurrency refreshIn feeType } sell { rate market } } }`, nil).GQLData()["rates"].([]any)
		restList := e.REST("GET", "/markets/rates", m.TestPublic, nil).Expect(200).List()
		if len(list) == 0 || len(list) != len(restList) {
			t.Fatalf("graphql %d pairs, REST %d", len(list), len(restList))
		}
		one := e.GQL(m.TestSecret, `{ rate(fromCurrency: "NGN", toCurrency: "USDT") { rate market fiat asset } }`, nil).GQLData()["rate"].(map[string]any)
		restOne := e.REST("GET", "/markets/rates?from_currency=NGN&to_currency=USDT", m.TestSecret, nil).Expect(200).Data()
		if one["rate"] != restOne["rate"].(interface{ String() string }).String() || one["market"] != "BUY" {
			t.Errorf("rate: %v vs %v", one, restOne)
		}
		q := e.GQL(m.TestSecret, `mutation { createRate(input: {fromCurrency: "USDT", toCurrency: "NGN", fromAmount: "100", transactionType: WITHDRAWAL}) {
			reference fromAmount toAmount fee feeType rate transactionType used refreshIn expiresAt } }`, nil).GQLData()["createRate"].(map[string]any)
		if q["transactionType"] != "WITHDRAWAL" || q["used"] != false || q["feeType"] != "FLAT" || q["fromAmount"] != "100" {
			t.Errorf("quote: %v", q)
		}
		ref := q["reference"].(string)
		e.Clock.Advance(200e9)
		rq := e.GQL(m.TestSecret, `mutation($r: String!) { refreshRate(input: {reference: $r}) { reference expiresAt } }`, map[string]any{"r": ref}).GQLData()["refreshRate"].(map[string]any)
		if rq["reference"] != ref || rq["expiresAt"] == q["expiresAt"] {
			t.Errorf("refresh: %v", rq)
		}
		if r := e.GQL(m.TestSecret, `mutation { createRate(input: {fromCurrency: "USDT", toCurrency: "NGN", fromAmount: "1", toAmount: "2"}) { reference } }`, nil); r.Code() != "VALIDATION_ERROR" {
			t.Errorf("both amounts: %s", r.Body)
		}
		if r := e.GQL(m.TestSecret, `mutation { createRate(input: {fromCurrency: "NGN", toCurrency: "GHS", fromAmount: "1"}) { reference } }`, nil); r.Code() != "PAIR_NOT_SUPPORTED" {
			t.Errorf("unsupported pair: %s", r.Body)
		}
	})
}
