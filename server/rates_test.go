package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/rates"
	"merchantpay/internal/tenant"
	"merchantpay/rest"
	"merchantpay/server/servertest"
)

var rateUUID = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// rateFields are the spec's indicative rate fields and their JSON types.
var rateFields = map[string]string{
	"fiat": "string", "asset": "string", "from_currency": "string", "to_currency": "string",
	"fee": "number", "fee_type": "string", "refresh_in": "number", "rate": "number", "market": "string",
}

// quoteFields are the spec's created rate fields and their JSON types
// ("null|string": null or a string).
var quoteFields = map[string]string{
	"from_currency": "string", "to_currency": "string", "from_amount": "number", "to_amount": "number",
	"reference": "string", "expires_at": "string", "settlement_time": "null|number", "fee": "number",
	"fee_type": "string", "rate": "number", "transaction_type": "string", "deposit_method": "null|string",
	"withdrawal_method": "null|string", "created_at": "string", "updated_at": "string", "fiat": "string",
	"asset": "string", "refresh_in": "number", "used": "boolean",
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

func checkShape(t *testing.T, what string, obj map[string]any, want map[string]string) {
	t.Helper()
	for k, typ := range want {
		v, ok := obj[k]
		if !ok {
			t.Errorf("%s: field %s missing", what, k)
			continue
		}
		if got := jsonType(v); !slices.Contains(strings.Split(typ, "|"), got) {
			t.Errorf("%s: field %s is %s (%v), want %s", what, k, got, v, typ)
		}
	}
}

func num(t *testing.T, v any) decimal.Decimal {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a JSON number", v, v)
	}
	return decimal.RequireFromString(string(n))
}

func wantNum(t *testing.T, obj map[string]any, field, want string) {
	t.Helper()
	if got := num(t, obj[field]); !got.Equal(decimal.RequireFromString(want)) {
		t.Errorf("%s = %s, want %s", field, got, want)
	}
}

func wantTime(t *testing.T, obj map[string]any, field string, want time.Time) {
	t.Helper()
	if got := obj[field]; got != rest.Time(want) {
		t.Errorf("%s = %v, want %s", field, got, rest.Time(want))
	}
}

func merchantCtx(m servertest.Merchant) context.Context {
	return tenant.With(context.Background(), tenant.Tenant{MerchantID: m.ID, Mode: tenant.Test})
}

func createQuote(e *servertest.Env, key string, body map[string]any) map[string]any {
	e.T.Helper()
	return e.REST("POST", "/rates/create", key, body).Expect(200).Data()
}

func TestRatesListForm(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Rates List")
		for _, key := range []string{m.TestSecret, m.TestPublic} {
			r := e.REST("GET", "/markets/rates", key, nil).Expect(200)
			list := r.List()
			if len(list) != 10 {
				t.Fatalf("%d pairs, want 10: %s", len(list), r.Body)
			}
			var pairs []string
			for _, x := range list {
				el := x.(map[string]any)
				pair, _ := el["pair"].(string)
				pairs = append(pairs, pair)
				asset, fiat, _ := strings.Cut(pair, "/")
				buy, _ := el["buy"].(map[string]any)
				sell, _ := el["sell"].(map[string]any)
				checkShape(t, pair+" buy", buy, rateFields)
				checkShape(t, pair+" sell", sell, rateFields)
				if buy["market"] != "BUY" || buy["from_currency"] != fiat || buy["to_currency"] != asset ||
					sell["market"] != "SELL" || sell["from_currency"] != asset || sell["to_currency"] != fiat ||
					buy["fiat"] != fiat || buy["asset"] != asset || sell["fiat"] != fiat || sell["asset"] != asset {
					t.Errorf("%s: buy %v sell %v", pair, buy, sell)
				}
				if !num(t, buy["rate"]).GreaterThan(num(t, sell["rate"])) {
					t.Errorf("%s: buy rate %v not above sell rate %v", pair, buy["rate"], sell["rate"])
				}
				if ri := num(t, buy["refresh_in"]); ri.LessThan(decimal.New(1, 0)) || ri.GreaterThan(decimal.New(20, 0)) || !ri.IsInteger() {
					t.Errorf("%s: refresh_in %s, want whole seconds in 1..20", pair, ri)
				}
				if pair == "USDT/NGN" {
					// Static source: mid 1600, spread 0.5%, swap fee 0.5%.
					wantNum(t, buy, "rate", "1608")
					wantNum(t, sell, "rate", "1592")
					wantNum(t, buy, "fee", "0.5")
					if buy["fee_type"] != "PERCENTAGE" {
						t.Errorf("fee_type %v", buy["fee_type"])
					}
				}
			}
			if !slices.IsSorted(pairs) || !slices.Contains(pairs, "USD/GHS") || !slices.Contains(pairs, "BTC/NGN") {
				t.Errorf("pairs %v", pairs)
			}
		}
	})
}

func TestRatesSingleForm(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Rates Single")
		r := e.REST("GET", "/markets/rates?from_currency=USDT&to_currency=NGN", m.TestPublic, nil).Expect(200)
		d := r.Data()
		checkShape(t, "USDT→NGN", d, rateFields)
		if d["market"] != "SELL" || d["fiat"] != "NGN" || d["asset"] != "USDT" || d["from_currency"] != "USDT" || d["to_currency"] != "NGN" {
			t.Errorf("USDT→NGN: %v", d)
		}
		wantNum(t, d, "rate", "1592")
		if _, isList := r.JSON["data"].([]any); isList {
			t.Error("single form answered a list")
		}

		d = e.REST("GET", "/markets/rates?from_currency=GHS&to_currency=USD", m.TestSecret, nil).Expect(200).Data()
		if d["market"] != "BUY" || d["fiat"] != "GHS" || d["asset"] != "USD" {
			t.Errorf("GHS→USD: %v", d)
		}
		wantNum(t, d, "rate", "15.1125") // 15 × 1.0075

		// An operator's new mid is used at once (static source).
		if _, err := e.App.Rates.SetMid(context.Background(), "USDT/NGN", decimal.RequireFromString("1650.5")); err != nil {
			t.Fatal(err)
		}
		d = e.REST("GET", "/markets/rates?from_currency=NGN&to_currency=USDT", m.TestSecret, nil).Expect(200).Data()
		wantNum(t, d, "rate", "1658.7525") // 1650.5 × 1.005
	})
}

func TestRatesQueryErrors(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Rates Query")
		tests := []struct {
			query  string
			status int
			code   string
			fields []string
		}{
			{"from_currency=USDT", 400, "VALIDATION_ERROR", []string{"to_currency"}},
			{"to_currency=NGN", 400, "VALIDATION_ERROR", []string{"from_currency"}},
			{"from_currency=XYZ&to_currency=usdt", 400, "VALIDATION_ERROR", []string{"from_currency", "to_currency"}},
			{"from_currency=&to_currency=NGN", 400, "VALIDATION_ERROR", []string{"from_currency"}},
			{"from_currency=NGN&to_currency=NGN", 400, "VALIDATION_ERROR", []string{"to_currency"}},
			{"from_currency=USDT&to_currency=USDC", 422, "PAIR_NOT_SUPPORTED", nil},
			{"from_currency=NGN&to_currency=GHS", 422, "PAIR_NOT_SUPPORTED", nil},
		}
		for _, tt := range tests {
			r := e.REST("GET", "/markets/rates?"+tt.query, m.TestSecret, nil)
			if r.Status != tt.status || r.Code() != tt.code {
				t.Errorf("%s: %d %s, want %d %s: %s", tt.query, r.Status, r.Code(), tt.status, tt.code, r.Body)
				continue
			}
			if tt.fields != nil && !slices.Equal(r.Fields(), tt.fields) {
				t.Errorf("%s: fields %v, want %v", tt.query, r.Fields(), tt.fields)
			}
		}
	})
}

func TestCreateQuoteFromAmount(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Quote From")
		now := e.Clock.Now()
		r := e.REST("POST", "/rates/create", m.TestSecret, map[string]any{
			"from_currency": "USDT", "to_currency": "NGN", "from_amount": 100,
		}).Expect(200)
		if r.JSON["status"] != true || r.JSON["statusCode"] != json.Number("200") {
			t.Errorf("envelope: %s", r.Body)
		}
		d := r.Data()
		checkShape(t, "quote", d, quoteFields)
		// SELL at 1592: gross 159200 NGN, fee 0.5% = 796.
		wantNum(t, d, "from_amount", "100")
		wantNum(t, d, "to_amount", "158404")
		wantNum(t, d, "fee", "796")
		wantNum(t, d, "rate", "1592")
		wantNum(t, d, "settlement_time", "30")
		wantNum(t, d, "refresh_in", "90")
		wantTime(t, d, "created_at", now)
		wantTime(t, d, "updated_at", now)
		wantTime(t, d, "expires_at", now.Add(90*time.Second))
		ref, _ := d["reference"].(string)
		if !rateUUID.MatchString(ref) || d["fee_type"] != "FLAT" || d["transaction_type"] != "SWAP" || d["used"] != false ||
			d["fiat"] != "NGN" || d["asset"] != "USDT" || d["deposit_method"] != nil || d["withdrawal_method"] != nil ||
			d["from_currency"] != "USDT" || d["to_currency"] != "NGN" {
			t.Errorf("quote: %v", d)
		}
		// The exact JSON text: numbers, not strings.
		if !strings.Contains(string(r.Body), `"to_amount":158404,`) || !strings.Contains(string(r.Body), `"settlement_time":30,`) {
			t.Errorf("body: %s", r.Body)
		}
	})
}

func TestCreateQuoteToAmountAndTypes(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Quote To")
		// BUY at 1608 with a 0.5% fee, paying out exactly 100 USDT: from_amount
		// = 100 / 0.995 × 1608 = 161608.0402… NGN, rounded up.
		d := createQuote(e, m.TestSecret, map[string]any{"from_currency": "NGN", "to_currency": "USDT", "to_amount": 100})
		wantNum(t, d, "from_amount", "161608.05")
		wantNum(t, d, "to_amount", "100")
		wantNum(t, d, "fee", "0.502513")
		wantNum(t, d, "rate", "1608")

		// The same conversion from the other side agrees within a minor unit.
		fwd := createQuote(e, m.TestSecret, map[string]any{"from_currency": "NGN", "to_currency": "USDT", "from_amount": 161608.05})
		if diff := num(t, fwd["to_amount"]).Sub(decimal.New(100, 0)).Abs(); diff.GreaterThan(decimal.RequireFromString("0.000006")) {
			t.Errorf("from-side quote pays %v for the to-side's from_amount", fwd["to_amount"])
		}

		// Withdrawal: flat 100 NGN on a SELL.
		d = createQuote(e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 100, "transaction_type": "withdrawal"})
		wantNum(t, d, "to_amount", "159100")
		wantNum(t, d, "fee", "100")
		if d["transaction_type"] != "WITHDRAWAL" || d["settlement_time"] != nil || d["withdrawal_method"] != nil {
			t.Errorf("withdrawal quote: %v", d)
		}
		// Withdrawal paying out the asset: the 100 NGN flat fee in USDT at
		// 1608, rounded up: 0.06219.
		d = createQuote(e, m.TestSecret, map[string]any{"from_currency": "NGN", "to_currency": "USDT", "from_amount": 200000,
			"transaction_type": "WITHDRAWAL", "withdrawal_method": "mobile-money"})
		wantNum(t, d, "fee", "0.06219")
		wantNum(t, d, "to_amount", "124.315919")
		if d["withdrawal_method"] != "mobile-money" {
			t.Errorf("withdrawal quote: %v", d)
		}
		// Crypto-pay deposit: 1% fee, no settlement time.
		d = createQuote(e, m.TestSecret, map[string]any{"from_currency": "BTC", "to_currency": "GHS", "from_amount": 0.01,
			"transaction_type": "deposit", "deposit_method": "crypto-pay"})
		// SELL at 1420000 × 0.99 = 1405800: gross 14058 GHS, fee 140.58.
		wantNum(t, d, "rate", "1405800")
		wantNum(t, d, "to_amount", "13917.42")
		wantNum(t, d, "fee", "140.58")
		if d["transaction_type"] != "DEPOSIT" || d["deposit_method"] != "crypto-pay" || d["settlement_time"] != nil ||
			d["fiat"] != "GHS" || d["asset"] != "BTC" {
			t.Errorf("deposit quote: %v", d)
		}
	})
}

func TestCreateQuoteValidation(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Quote Validation")
		tests := []struct {
			name   string
			body   any
			fields []string
		}{
			{"both amounts", map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1, "to_amount": 1600}, []string{"from_amount", "to_amount"}},
			{"neither amount", map[string]any{"from_currency": "USDT", "to_currency": "NGN"}, []string{"from_amount", "to_amount"}},
			{"unknown transaction_type", map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1, "transaction_type": "transfer"}, []string{"transaction_type"}},
			{"bad currency codes", map[string]any{"from_currency": "usdt", "to_currency": "EUR", "from_amount": 1}, []string{"from_currency", "to_currency"}},
			{"missing currencies", map[string]any{"from_amount": 1}, []string{"from_currency", "to_currency"}},
			{"same currency", map[string]any{"from_currency": "NGN", "to_currency": "NGN", "from_amount": 1}, []string{"to_currency"}},
			{"string amount", map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": "100"}, []string{"from_amount"}},
			{"too many decimals", map[string]any{"from_currency": "NGN", "to_currency": "USDT", "from_amount": 1.001}, []string{"from_amount"}},
			{"zero amount", map[string]any{"from_currency": "NGN", "to_currency": "USDT", "to_amount": 0}, []string{"to_amount"}},
			{"too large", map[string]any{"from_currency": "NGN", "to_currency": "USDT", "from_amount": 10000000001}, []string{"from_amount"}},
			{"deposit_method on a swap", map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1, "deposit_method": "crypto-pay"}, []string{"deposit_method"}},
			{"unknown deposit_method", map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1, "transaction_type": "deposit", "deposit_method": "card"}, []string{"deposit_method"}},
			{"withdrawal_method on a deposit", map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1, "transaction_type": "deposit", "withdrawal_method": "mobile-money"}, []string{"withdrawal_method"}},
			{"wrong types", map[string]any{"from_currency": 1, "to_currency": true, "to_amount": "5", "transaction_type": 7}, []string{"from_currency", "to_currency", "to_amount", "transaction_type"}},
			{"everything at once", map[string]any{"from_currency": "XYZ", "to_currency": "NGN", "from_amount": -1, "to_amount": 1, "transaction_type": "gift", "deposit_method": "card"},
				[]string{"from_currency", "from_amount", "to_amount", "transaction_type", "deposit_method"}},
		}
		for _, tt := range tests {
			r := e.REST("POST", "/rates/create", m.TestSecret, tt.body)
			if r.Status != 400 || r.Code() != "VALIDATION_ERROR" {
				t.Errorf("%s: %d %s: %s", tt.name, r.Status, r.Code(), r.Body)
				continue
			}
			got := r.Fields()
			for _, f := range tt.fields {
				if !slices.Contains(got, f) {
					t.Errorf("%s: fields %v lack %s", tt.name, got, f)
				}
			}
			if len(got) != len(tt.fields) {
				t.Errorf("%s: fields %v, want %v", tt.name, got, tt.fields)
			}
		}
		if r := e.REST("POST", "/rates/create", m.TestSecret, `[1]`); r.Status != 400 || r.Code() != "BAD_REQUEST" {
			t.Errorf("array body: %d %s", r.Status, r.Code())
		}
		if r := e.REST("POST", "/rates/create", m.TestPublic, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1}); r.Status != 403 {
			t.Errorf("public key create: %d", r.Status)
		}
		// A quote that would pay out nothing after the fee.
		r := e.REST("POST", "/rates/create", m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 0.01, "transaction_type": "withdrawal"})
		if r.Status != 422 || r.Code() != "AMOUNT_TOO_SMALL" {
			t.Errorf("tiny withdrawal: %d %s: %s", r.Status, r.Code(), r.Body)
		}
	})
}

func TestQuotePairSupportAndEnablement(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m, other := e.Merchant("Pair Owner"), e.Merchant("Pair Other")
		r := e.REST("POST", "/rates/create", m.TestSecret, map[string]any{"from_currency": "BTC", "to_currency": "USDT", "from_amount": 1})
		if r.Status != 422 || r.Code() != "PAIR_NOT_SUPPORTED" {
			t.Fatalf("unsupported pair: %d %s", r.Status, r.Code())
		}
		ctx := context.Background()
		st, err := e.App.Rates.SetEnabled(ctx, m.ID, "BTC/NGN", false)
		if err != nil || st.Enabled || st.Pair != "BTC/NGN" || st.MerchantID != m.ID {
			t.Fatalf("disable: %+v, %v", st, err)
		}
		for _, body := range []map[string]any{
			{"from_currency": "BTC", "to_currency": "NGN", "from_amount": 0.5},
			{"from_currency": "NGN", "to_currency": "BTC", "to_amount": 0.5, "transaction_type": "withdrawal"},
		} {
			if r := e.REST("POST", "/rates/create", m.TestSecret, body); r.Status != 422 || r.Code() != "PAIR_NOT_ENABLED" {
				t.Errorf("disabled pair: %d %s", r.Status, r.Code())
			}
		}
		if r := e.REST("GET", "/markets/rates?from_currency=NGN&to_currency=BTC", m.TestPublic, nil); r.Status != 422 || r.Code() != "PAIR_NOT_ENABLED" {
			t.Errorf("disabled pair rate: %d %s", r.Status, r.Code())
		}
		list := e.REST("GET", "/markets/rates", m.TestSecret, nil).Expect(200).List()
		if len(list) != 9 {
			t.Errorf("list has %d pairs after disabling one", len(list))
		}
		for _, x := range list {
			if x.(map[string]any)["pair"] == "BTC/NGN" {
				t.Error("a disabled pair is listed")
			}
		}
		// Per merchant, in both modes; others keep it.
		if r := e.REST("POST", "/rates/create", m.LiveSecret, map[string]any{"from_currency": "BTC", "to_currency": "NGN", "from_amount": 0.5}); r.Code() != "PAIR_NOT_ENABLED" {
			t.Errorf("live mode: %d %s", r.Status, r.Code())
		}
		createQuote(e, other.TestSecret, map[string]any{"from_currency": "BTC", "to_currency": "NGN", "from_amount": 0.5})

		// A quote made before the pair was disabled cannot be refreshed.
		q := createQuote(e, m.TestSecret, map[string]any{"from_currency": "ETH", "to_currency": "NGN", "from_amount": 1})
		if _, err := e.App.Rates.SetEnabled(ctx, m.ID, "ETH/NGN", false); err != nil {
			t.Fatal(err)
		}
		if r := e.REST("POST", "/rates/refresh", m.TestSecret, map[string]any{"reference": q["reference"]}); r.Code() != "PAIR_NOT_ENABLED" {
			t.Errorf("refresh of a disabled pair: %d %s", r.Status, r.Code())
		}

		if _, err := e.App.Rates.SetEnabled(ctx, m.ID, "BTC/NGN", true); err != nil {
			t.Fatal(err)
		}
		createQuote(e, m.TestSecret, map[string]any{"from_currency": "BTC", "to_currency": "NGN", "from_amount": 0.5})
		if _, err := e.App.Rates.SetEnabled(ctx, "no-such-merchant", "BTC/NGN", false); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("unknown merchant: %v", err)
		}
		if _, err := e.App.Rates.SetEnabled(ctx, m.ID, "BTC/USD", false); apperr.KindOf(err) != apperr.PairNotSupported {
			t.Errorf("unknown pair: %v", err)
		}
	})
}

func TestRefreshQuote(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Refresher")
		q := createQuote(e, m.TestSecret, map[string]any{"from_currency": "NGN", "to_currency": "USDT", "to_amount": 250})
		ref := q["reference"].(string)

		// Before expiry.
		e.Clock.Advance(30 * time.Second)
		now := e.Clock.Now()
		d := e.REST("POST", "/rates/refresh", m.TestSecret, map[string]any{"reference": ref}).Expect(200).Data()
		checkShape(t, "refreshed", d, quoteFields)
		if d["reference"] != ref || d["created_at"] != q["created_at"] || d["used"] != false {
			t.Errorf("refreshed: %v", d)
		}
		wantTime(t, d, "updated_at", now)
		wantTime(t, d, "expires_at", now.Add(90*time.Second))
		wantNum(t, d, "refresh_in", "90")
		wantNum(t, d, "to_amount", "250") // the fixed side stays
		if d["from_amount"].(json.Number) != q["from_amount"].(json.Number) {
			t.Errorf("static price moved: %v vs %v", d["from_amount"], q["from_amount"])
		}

		// After expiry: consuming fails, refreshing revives it.
		e.Clock.Advance(91 * time.Second)
		ctx := merchantCtx(m)
		if _, err := consume(ctx, e, ref, rates.Swap, "SWP-1"); apperr.KindOf(err) != apperr.RateExpired ||
			!strings.Contains(apperr.As(err).Message, "refresh") {
			t.Fatalf("consume expired: %v", err)
		}
		if _, err := e.App.Rates.SetMid(context.Background(), "USDT/NGN", decimal.New(1700, 0)); err != nil {
			t.Fatal(err)
		}
		now = e.Clock.Now()
		d = e.REST("POST", "/rates/refresh", m.TestSecret, map[string]any{"reference": ref}).Expect(200).Data()
		wantTime(t, d, "expires_at", now.Add(90*time.Second))
		wantNum(t, d, "rate", "1708.5") // recomputed at the new mid
		wantNum(t, d, "to_amount", "250")
		if !num(t, d["from_amount"]).GreaterThan(num(t, q["from_amount"])) {
			t.Errorf("from_amount %v not above %v after the mid rose", d["from_amount"], q["from_amount"])
		}
		got, err := consume(ctx, e, ref, "SWAP", "SWP-1")
		if err != nil || !got.Used || got.UsedBy == nil || *got.UsedBy != "SWP-1" || got.ToAmount != 250_000_000 {
			t.Fatalf("consume refreshed: %+v, %v", got, err)
		}

		// Used: 409 RATE_USED, on refresh too.
		r := e.REST("POST", "/rates/refresh", m.TestSecret, map[string]any{"reference": ref})
		if r.Status != 409 || r.Code() != "RATE_USED" {
			t.Errorf("refresh used: %d %s", r.Status, r.Code())
		}

		// Unknown, other merchant, other mode: 404.
		other := e.Merchant("Someone Else")
		for _, c := range []struct{ key, ref string }{{m.TestSecret, "00000000-0000-0000-0000-000000000000"}, {other.TestSecret, ref}, {m.LiveSecret, ref}} {
			r := e.REST("POST", "/rates/refresh", c.key, map[string]any{"reference": c.ref})
			if r.Status != 404 || r.Code() != "NOT_FOUND" || !slices.Equal(r.Fields(), []string{"reference"}) {
				t.Errorf("refresh %s: %d %s %v", c.ref, r.Status, r.Code(), r.Fields())
			}
		}
		for _, body := range []any{map[string]any{}, map[string]any{"reference": 5}} {
			r := e.REST("POST", "/rates/refresh", m.TestSecret, body)
			if r.Status != 400 || r.Code() != "VALIDATION_ERROR" || !slices.Equal(r.Fields(), []string{"reference"}) {
				t.Errorf("refresh %v: %d %s %v", body, r.Status, r.Code(), r.Fields())
			}
		}
	})
}

// TestRefreshMovesWithTheSandboxMarket shows that with the sandbox market a
// refresh in a later window visibly re-prices the quote.
func TestRefreshMovesWithTheSandboxMarket(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Sandbox Market")
		q := createQuote(e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 1000})
		rate := num(t, q["rate"])
		if lo, hi := decimal.New(1592*98, -2), decimal.New(1592*102, -2); rate.LessThan(lo) || rate.GreaterThan(hi) {
			t.Fatalf("sandbox rate %s far from 1592", rate)
		}
		ind := e.REST("GET", "/markets/rates?from_currency=USDT&to_currency=NGN", m.TestSecret, nil).Expect(200).Data()
		if !num(t, ind["rate"]).Equal(rate) {
			t.Errorf("indicative %v and quote %s differ within one window", ind["rate"], rate)
		}
		moved := false
		for i := 0; i < 5 && !moved; i++ {
			e.Clock.Advance(5 * time.Second)
			d := e.REST("POST", "/rates/refresh", m.TestSecret, map[string]any{"reference": q["reference"]}).Expect(200).Data()
			moved = !num(t, d["rate"]).Equal(rate) && !num(t, d["to_amount"]).Equal(num(t, q["to_amount"]))
			wantNum(t, d, "from_amount", "1000")
		}
		if !moved {
			t.Error("the sandbox market did not move the quote over five windows")
		}
	}, servertest.With("PRICE_SOURCE", "sandbox"), servertest.With("INDICATIVE_REFRESH", "5s"))
}

// consume consumes a quote in a transaction of its own, as a swap or a
// withdrawal consumes one in its own.
func consume(ctx context.Context, e *servertest.Env, ref, transactionType, usedBy string) (*ent.Quote, error) {
	var q *ent.Quote
	err := e.App.DB.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) (err error) {
		q, err = e.App.Rates.Consume(ctx, tx, ref, transactionType, usedBy)
		return err
	})
	return q, err
}

func TestConsume(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Consumer")
		ctx := merchantCtx(m)
		q := createQuote(e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 10, "transaction_type": "withdrawal"})
		ref := q["reference"].(string)

		if _, err := consume(ctx, e, "nope", rates.Withdrawal, "WTH-1"); apperr.KindOf(err) != apperr.NotFound ||
			apperr.As(err).Fields[0].Field != "rate_reference" {
			t.Errorf("unknown: %v", err)
		}
		other := e.Merchant("Not The Owner")
		if _, err := consume(merchantCtx(other), e, ref, rates.Withdrawal, "WTH-1"); apperr.KindOf(err) != apperr.NotFound {
			t.Errorf("other merchant: %v", err)
		}
		if _, err := consume(ctx, e, ref, rates.Swap, "SWP-1"); apperr.KindOf(err) != apperr.RateTypeMismatch {
			t.Errorf("swap of a withdrawal quote: %v", err)
		}
		got, err := consume(ctx, e, ref, rates.Withdrawal, "WTH-1")
		if err != nil || !got.Used || got.FromAmount != 10_000_000 || got.ToAmount != 15_820_00 || got.Fee != 100_00 {
			t.Fatalf("consume: %+v, %v", got, err)
		}
		if _, err := consume(ctx, e, ref, rates.Withdrawal, "WTH-2"); apperr.KindOf(err) != apperr.RateUsed {
			t.Errorf("second consume: %v", err)
		}
		// A consumption rolled back with its transaction leaves the quote usable.
		q2 := createQuote(e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 10})
		boom := fmt.Errorf("the swap failed later")
		err = e.App.DB.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			if _, err := e.App.Rates.Consume(ctx, tx, q2["reference"].(string), rates.Swap, "SWP-9"); err != nil {
				return err
			}
			return boom
		})
		if err != boom {
			t.Fatalf("tx: %v", err)
		}
		if _, err := consume(ctx, e, q2["reference"].(string), rates.Swap, "SWP-10"); err != nil {
			t.Errorf("consume after a rolled-back consume: %v", err)
		}
	})
}

// TestConsumeRace races many consumers on one quote: exactly one wins.
func TestConsumeRace(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Racer")
		ctx := merchantCtx(m)
		for round := 0; round < 3; round++ {
			q := createQuote(e, m.TestSecret, map[string]any{"from_currency": "USDT", "to_currency": "NGN", "from_amount": 5})
			ref := q["reference"].(string)
			const n = 16
			var wg sync.WaitGroup
			errs := make([]error, n)
			start := make(chan struct{})
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					// Each consumer in its own transaction, as a swap would be.
					errs[i] = e.App.DB.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
						_, err := e.App.Rates.Consume(ctx, tx, ref, rates.Swap, fmt.Sprintf("SWP-%d", i))
						return err
					})
				}()
			}
			close(start)
			wg.Wait()
			wins := 0
			for _, err := range errs {
				switch {
				case err == nil:
					wins++
				case apperr.KindOf(err) != apperr.RateUsed:
					t.Errorf("loser got %v, want RATE_USED", err)
				}
			}
			if wins != 1 {
				t.Fatalf("round %d: %d winners", round, wins)
			}
			r := e.REST("POST", "/rates/refresh", m.TestSecret, map[string]any{"reference": ref})
			if r.Status != http.StatusConflict || r.Code() != "RATE_USED" {
				t.Errorf("refresh after race: %d %s", r.Status, r.Code())
			}
		}
	})
}
