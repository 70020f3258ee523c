package pricing

import (
	"errors"
	"testing"

	"github.com/shopspring/decimal"

	"merchantpay/internal/money"
)

func d(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func TestParsePairAndSideFor(t *testing.T) {
	good := map[string]Pair{
		"USDT/NGN": {money.USDT, money.NGN},
		"BTC/NGN":  {money.BTC, money.NGN},
		"USD/GHS":  {money.USD, money.GHS},
		"ETH/GHS":  {money.ETH, money.GHS},
		"USDC/USD": {money.USDC, money.USD},
	}
	for s, want := range good {
		p, err := ParsePair(s)
		if err != nil || p != want || p.String() != s {
			t.Errorf("ParsePair(%q) = %v, %v", s, p, err)
		}
	}
	for _, s := range []string{"", "USDT", "USDT-NGN", "usdt/ngn", "USDT/EUR", "NGN/NGN", "NGN/USDT", "BTC/USDT", "USDT/NGN/GHS"} {
		if _, err := ParsePair(s); err == nil {
			t.Errorf("ParsePair(%q) accepted", s)
		}
	}

	p := Pair{money.USDT, money.NGN}
	tests := []struct {
		from, to money.Currency
		want     Side
	}{
		{money.NGN, money.USDT, Buy},
		{money.USDT, money.NGN, Sell},
		{money.USDT, money.USDT, ""},
		{money.GHS, money.USDT, ""},
		{money.USDT, money.GHS, ""},
		{money.BTC, money.NGN, ""},
	}
	for _, tt := range tests {
		got, err := SideFor(p, tt.from, tt.to)
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("SideFor(%s, %s→%s) = %q, %v; want %q", p, tt.from, tt.to, got, err, tt.want)
		}
	}
	// USD is the asset side against NGN: USD → NGN is selling it.
	if s, _ := SideFor(Pair{money.USD, money.NGN}, money.USD, money.NGN); s != Sell {
		t.Errorf("USD→NGN on USD/NGN = %q, want SELL", s)
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		mid, spread string
		side        Side
		want        string
	}{
		{"1500", "0.01", Buy, "1515"},
		{"1500", "0.01", Sell, "1485"},
		{"1500", "0", Buy, "1500"},
		{"100000000", "0.005", Buy, "100500000"},
		{"100000000", "0.005", Sell, "99500000"},
		{"15.5", "0.02", Sell, "15.19"},
		{"15.5", "0.02", Buy, "15.81"},
		// 1591.974382716...: BUY rounds up, SELL (1568.272530863...) down.
		{"1580.123456789", "0.0075", Buy, "1591.97438272"},
		{"1580.123456789", "0.0075", Sell, "1568.27253086"},
		// 0.000100005 / 0.000099995: beyond 8 places.
		{"0.0001", "0.00005", Buy, "0.00010001"},
		{"0.0001", "0.00005", Sell, "0.00009999"},
	}
	for _, tt := range tests {
		got := Rate(d(tt.mid), d(tt.spread), tt.side)
		if !got.Equal(d(tt.want)) {
			t.Errorf("Rate(%s, %s, %s) = %s, want %s", tt.mid, tt.spread, tt.side, got, tt.want)
		}
		if !got.Equal(got.Truncate(RateDecimals)) {
			t.Errorf("Rate(%s, %s, %s) = %s has more than %d places", tt.mid, tt.spread, tt.side, got, RateDecimals)
		}
	}
}

func TestFeeSpecValidate(t *testing.T) {
	tests := []struct {
		fee FeeSpec
		ok  bool
	}{
		{FeeSpec{Flat, d("0")}, true},
		{FeeSpec{Flat, d("50")}, true},
		{FeeSpec{Flat, d("0.001")}, true}, // sub-minor flat fees round up when charged
		{FeeSpec{Flat, d("-1")}, false},
		{FeeSpec{Percentage, d("0")}, true},
		{FeeSpec{Percentage, d("99.99")}, true},
		{FeeSpec{Percentage, d("100")}, false},
		{FeeSpec{Percentage, d("-0.5")}, false},
		{FeeSpec{"", d("1")}, false},
		{FeeSpec{"flat", d("1")}, false},
	}
	for _, tt := range tests {
		if err := tt.fee.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v.Validate() = %v, want ok=%v", tt.fee, err, tt.ok)
		}
	}
}

// Hand-computed quotes, one BUY and one SELL for each pair class, FLAT and
// PERCENTAGE fees. "rev" is QuoteToAmount(wantTo) → from it needs.
func TestQuoteExamples(t *testing.T) {
	tests := []struct {
		name     string
		from, to money.Currency
		side     Side
		rate     string
		fee      FeeSpec
		fromIn   int64
		wantTo   int64
		wantFee  int64
		wantRevF int64 // from_amount QuoteToAmount(wantTo) needs
	}{
		// 100 USDT × 1485 = 148500 NGN; − 50 = 148450.00.
		{"USDT/NGN sell flat", money.USDT, money.NGN, Sell, "1485", FeeSpec{Flat, d("50")},
			100_000000, 148450_00, 50_00, 100_000000},
		// 10000 NGN ÷ 1515 = 6.600660066… USDT; fee 1% = 0.0660066… ↑ 0.066007;
		// to = 6.534653465… ↓ 6.534653. Back: 6.534653 ÷ 0.99 × 1515 = 9999.99928… ↑ 10000.00.
		{"USDT/NGN buy pct", money.NGN, money.USDT, Buy, "1515", FeeSpec{Percentage, d("1")},
			10000_00, 6_534653, 66007, 10000_00},
		// 0.00123456 BTC × 99500000 = 122838.72 NGN; fee 0.5% = 614.1936 ↑ 614.20;
		// to = 122224.5264 ↓ 122224.52.
		{"BTC/NGN sell pct", money.BTC, money.NGN, Sell, "99500000", FeeSpec{Percentage, d("0.5")},
			123456, 122224_52, 614_20, 123456},
		// 50000 NGN ÷ 100500000 = 0.000497512437… BTC; − 0.00001 = 0.000487512… ↓ 0.00048751.
		// Back: 0.00049751 × 100500000 = 49999.755 ↑ 49999.76.
		{"BTC/NGN buy flat", money.NGN, money.BTC, Buy, "100500000", FeeSpec{Flat, d("0.00001")},
			50000_00, 48751, 1000, 49999_76},
		// 100 USD × 15.19 = 1519 GHS; fee 1.5% = 22.785 ↑ 22.79; to = 1496.215 ↓ 1496.21.
		{"USD/GHS sell pct", money.USD, money.GHS, Sell, "15.19", FeeSpec{Percentage, d("1.5")},
			100_00, 1496_21, 22_79, 100_00},
		// 1000 GHS ÷ 15.81 = 63.2511… USD; − 1 = 62.2511… ↓ 62.25.
		// Back: 63.25 × 15.81 = 999.9825 ↑ 999.99.
		{"USD/GHS buy flat", money.GHS, money.USD, Buy, "15.81", FeeSpec{Flat, d("1")},
			1000_00, 62_25, 1_00, 999_99},
		// 0.5 ETH × 39500 = 19750 GHS; − 25.50 = 19724.50.
		{"ETH/GHS sell flat", money.ETH, money.GHS, Sell, "39500", FeeSpec{Flat, d("25.5")},
			50000000, 19724_50, 25_50, 50000000},
		// 1234.56 GHS ÷ 40500 = 0.030482962… ETH; fee 0.25% = 0.0000762074… ↑ 0.00007621;
		// to = 0.0304067555… ↓ 0.03040675.
		{"ETH/GHS buy pct", money.GHS, money.ETH, Buy, "40500", FeeSpec{Percentage, d("0.25")},
			1234_56, 3040675, 7621, 1234_56},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rate := d(tt.rate)
			q, err := QuoteFromAmount(tt.from, tt.to, tt.side, rate, tt.fee, tt.fromIn)
			if err != nil {
				t.Fatal(err)
			}
			want := Quote{From: tt.from, To: tt.to, Side: tt.side, Rate: rate,
				FromMinor: tt.fromIn, ToMinor: tt.wantTo, FeeMinor: tt.wantFee}
			if !sameQuote(q, want) {
				t.Errorf("QuoteFromAmount = %+v\nwant             %+v", q, want)
			}
			r, err := QuoteToAmount(tt.from, tt.to, tt.side, rate, tt.fee, tt.wantTo)
			if err != nil {
				t.Fatal(err)
			}
			want.FromMinor = tt.wantRevF
			if !sameQuote(r, want) {
				t.Errorf("QuoteToAmount = %+v\nwant           %+v", r, want)
			}
		})
	}
}

func sameQuote(a, b Quote) bool {
	return a.From == b.From && a.To == b.To && a.Side == b.Side && a.Rate.Equal(b.Rate) &&
		a.FromMinor == b.FromMinor && a.ToMinor == b.ToMinor && a.FeeMinor == b.FeeMinor
}

// Asking for 100 NGN from BTC needs 101 satoshi (1.005 sat rounded up), and
// 101 satoshi convert to 100.495 NGN ↓ 100.49: the reverse quote keeps the
// asked 100.00, the forward one pays 100.49, within the 99.5 kobo one
// satoshi is worth.
func TestQuoteToAmountRoundsFromUp(t *testing.T) {
	rate, fee := d("99500000"), FeeSpec{Flat, decimal.Zero}
	r, err := QuoteToAmount(money.BTC, money.NGN, Sell, rate, fee, 100_00)
	if err != nil || r.FromMinor != 101 || r.ToMinor != 100_00 || r.FeeMinor != 0 {
		t.Fatalf("QuoteToAmount = %+v, %v", r, err)
	}
	f, err := QuoteFromAmount(money.BTC, money.NGN, Sell, rate, fee, 101)
	if err != nil || f.ToMinor != 100_49 {
		t.Fatalf("QuoteFromAmount = %+v, %v", f, err)
	}
}

func TestQuoteErrors(t *testing.T) {
	flat0 := FeeSpec{Flat, decimal.Zero}
	tests := []struct {
		name    string
		reverse bool
		from    money.Currency
		to      money.Currency
		side    Side
		rate    string
		fee     FeeSpec
		amount  int64
		want    error // nil: any non-nil error
	}{
		// 0.000001 USDT × 1485 = 0.001485 NGN ↓ 0.00.
		{"dust", false, money.USDT, money.NGN, Sell, "1485", flat0, 1, ErrAmountTooSmall},
		// 0.01 NGN ÷ 100500000 ≈ 1e-10 BTC ↓ 0.
		{"dust buy", false, money.NGN, money.BTC, Buy, "100500000", flat0, 1, ErrAmountTooSmall},
		{"fee eats all", false, money.USDT, money.NGN, Sell, "1485", FeeSpec{Flat, d("14.85")}, 10000, ErrAmountTooSmall},
		{"fee exceeds", false, money.USDT, money.NGN, Sell, "1485", FeeSpec{Flat, d("100")}, 10000, ErrAmountTooSmall},
		{"to zero", true, money.USDT, money.NGN, Sell, "1485", flat0, 0, ErrAmountTooSmall},
		{"to negative", true, money.USDT, money.NGN, Sell, "1485", flat0, -5, ErrAmountTooSmall},
		// 10^10 BTC × 10^8 = 10^18 NGN > 10^10 NGN.
		{"too large", false, money.BTC, money.NGN, Sell, "100000000", flat0, money.MaxMinor(money.BTC), ErrAmountTooLarge},
		// 10^10 NGN asked from BTC at 0.0001 NGN/BTC: 10^14 BTC.
		{"too large reverse", true, money.BTC, money.NGN, Sell, "0.0001", flat0, money.MaxMinor(money.NGN), ErrAmountTooLarge},
		{"to above max", true, money.USDT, money.NGN, Sell, "1485", flat0, money.MaxMinor(money.NGN) + 1, ErrAmountTooLarge},
		{"from zero", false, money.USDT, money.NGN, Sell, "1485", flat0, 0, nil},
		{"zero rate", false, money.USDT, money.NGN, Sell, "0", flat0, 100, nil},
		{"negative rate", true, money.USDT, money.NGN, Sell, "-1", flat0, 100, nil},
		{"same currency", false, money.NGN, money.NGN, Sell, "1", flat0, 100, nil},
		{"unknown currency", false, "EUR", money.NGN, Sell, "1", flat0, 100, nil},
		{"bad side", false, money.USDT, money.NGN, "HOLD", "1485", flat0, 100, nil},
		{"bad fee", true, money.USDT, money.NGN, Sell, "1485", FeeSpec{Percentage, d("100")}, 100, nil},
	}
	for _, tt := range tests {
		f := QuoteFromAmount
		if tt.reverse {
			f = QuoteToAmount
		}
		q, err := f(tt.from, tt.to, tt.side, d(tt.rate), tt.fee, tt.amount)
		if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
			t.Errorf("%s: got %+v, %v; want %v", tt.name, q, err, tt.want)
		}
		if tt.want == nil && (errors.Is(err, ErrAmountTooSmall) || errors.Is(err, ErrAmountTooLarge)) {
			t.Errorf("%s: invalid input reported as %v", tt.name, err)
		}
	}
}
