package money

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

func dec(t *testing.T, s string) decimal.Decimal {
	t.Helper()
	d, err := decimal.NewFromString(s)
	if err != nil {
		t.Fatalf("bad test decimal %q: %v", s, err)
	}
	return d
}

func TestParseAndProperties(t *testing.T) {
	tests := []struct {
		code          string
		ok            bool
		decimals      int32
		fiat, isAsset bool
	}{
		{"NGN", true, 2, true, false},
		{"GHS", true, 2, true, false},
		{"USD", true, 2, true, false},
		{"USDT", true, 6, false, true},
		{"USDC", true, 6, false, true},
		{"BTC", true, 8, false, true},
		{"ETH", true, 8, false, true},
		{"ngn", false, 0, false, false},
		{"Usdt", false, 0, false, false},
		{" NGN", false, 0, false, false},
		{"NGN ", false, 0, false, false},
		{"EUR", false, 0, false, false},
		{"", false, 0, false, false},
	}
	for _, tt := range tests {
		c, ok := Parse(tt.code)
		if ok != tt.ok {
			t.Errorf("Parse(%q) ok = %v, want %v", tt.code, ok, tt.ok)
			continue
		}
		if !ok {
			if c != "" {
				t.Errorf("Parse(%q) = %q on failure, want empty", tt.code, c)
			}
			continue
		}
		if string(c) != tt.code || c.String() != tt.code {
			t.Errorf("Parse(%q) = %q", tt.code, c)
		}
		if got := c.Decimals(); got != tt.decimals {
			t.Errorf("%s.Decimals() = %d, want %d", c, got, tt.decimals)
		}
		if c.IsFiat() != tt.fiat || c.IsAsset() != tt.isAsset {
			t.Errorf("%s IsFiat=%v IsAsset=%v, want %v %v", c, c.IsFiat(), c.IsAsset(), tt.fiat, tt.isAsset)
		}
	}
	if Currency("EUR").Decimals() != -1 || Currency("EUR").IsFiat() || Currency("EUR").IsAsset() {
		t.Error("unknown currency must have Decimals -1 and be neither fiat nor asset")
	}
}

func TestAll(t *testing.T) {
	all := All()
	if len(all) != 7 {
		t.Fatalf("All() has %d currencies, want 7", len(all))
	}
	seen := map[Currency]bool{}
	for _, c := range all {
		if seen[c] {
			t.Errorf("duplicate %s", c)
		}
		seen[c] = true
		if p, ok := Parse(string(c)); !ok || p != c {
			t.Errorf("All() member %s does not parse", c)
		}
		if c.IsFiat() == c.IsAsset() {
			t.Errorf("%s must be exactly one of fiat and asset", c)
		}
	}
	all[0] = "XXX"
	if All()[0] != NGN {
		t.Error("All() must return a fresh slice")
	}
}

func TestMaxMinor(t *testing.T) {
	tests := map[Currency]int64{NGN: 1e12, USDT: 1e16, BTC: 1e18}
	for c, want := range tests {
		if got := MaxMinor(c); got != want {
			t.Errorf("MaxMinor(%s) = %d, want %d", c, got, want)
		}
	}
}

func TestToMinor(t *testing.T) {
	tests := []struct {
		in   string
		c    Currency
		want int64
		err  error // nil: ok; otherwise errors.Is target (or any error if errAny)
	}{
		{"0", NGN, 0, nil},
		{"1.5", NGN, 150, nil},
		{"1.50", NGN, 150, nil},
		{"1.500000", NGN, 150, nil},
		{"1e2", NGN, 10000, nil},
		{"-1.25", NGN, -125, nil},
		{"1.505", NGN, 0, ErrTooManyDecimals},
		{"0.001", USD, 0, ErrTooManyDecimals},
		{"-0.001", GHS, 0, ErrTooManyDecimals},
		{"0.000001", USDT, 1, nil},
		{"0.0000001", USDC, 0, ErrTooManyDecimals},
		{"0.00000001", BTC, 1, nil},
		{"0.000000001", ETH, 0, ErrTooManyDecimals},
		{"10000000000", BTC, 1e18, nil},
		{"10000000000", NGN, 1e12, nil},
		{"100000000000", BTC, 0, ErrOverflow}, // 10^19 minor > MaxInt64
		{"1e30", NGN, 0, ErrOverflow},
	}
	for _, tt := range tests {
		got, err := ToMinor(dec(t, tt.in), tt.c)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("ToMinor(%s %s) err = %v, want %v", tt.in, tt.c, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ToMinor(%s %s) = %d, %v; want %d", tt.in, tt.c, got, err, tt.want)
		}
	}
	if _, err := ToMinor(decimal.New(1, 0), "EUR"); err == nil {
		t.Error("ToMinor with unknown currency must fail")
	}
}

func TestFromMinorAndFormat(t *testing.T) {
	tests := []struct {
		m     int64
		c     Currency
		exact string // FromMinor(...).StringFixed(decimals)
		plain string // Format
	}{
		{150, NGN, "1.50", "1.5"},
		{10000, NGN, "100.00", "100"},
		{0, NGN, "0.00", "0"},
		{1, NGN, "0.01", "0.01"},
		{-150, GHS, "-1.50", "-1.5"},
		{-1, USD, "-0.01", "-0.01"},
		{1, BTC, "0.00000001", "0.00000001"},
		{100000000, BTC, "1.00000000", "1"},
		{123456789, ETH, "1.23456789", "1.23456789"},
		{1_000_000, USDT, "1.000000", "1"},
		{1_500_001, USDC, "1.500001", "1.500001"},
		{1e18, BTC, "10000000000.00000000", "10000000000"},
		{math.MaxInt64, BTC, "92233720368.54775807", "92233720368.54775807"},
		{math.MinInt64, NGN, "-92233720368547758.08", "-92233720368547758.08"},
	}
	for _, tt := range tests {
		d := FromMinor(tt.m, tt.c)
		if d.Exponent() != -tt.c.Decimals() {
			t.Errorf("FromMinor(%d, %s) exponent %d, want %d", tt.m, tt.c, d.Exponent(), -tt.c.Decimals())
		}
		if got := d.StringFixed(tt.c.Decimals()); got != tt.exact {
			t.Errorf("FromMinor(%d, %s) = %s, want %s", tt.m, tt.c, got, tt.exact)
		}
		if got := Format(tt.m, tt.c); got != tt.plain {
			t.Errorf("Format(%d, %s) = %q, want %q", tt.m, tt.c, got, tt.plain)
		}
		// Format is exact: parsing it back gives the same minor units.
		back, err := ToMinor(dec(t, tt.plain), tt.c)
		if err != nil || back != tt.m {
			t.Errorf("ToMinor(Format(%d, %s)) = %d, %v", tt.m, tt.c, back, err)
		}
	}
}

func TestValidateAmount(t *testing.T) {
	tests := []struct {
		in   string
		c    Currency
		want string // substring of the message; "" means valid
	}{
		{"1", NGN, ""},
		{"0.01", NGN, ""},
		{"1.50", NGN, ""},
		{"0.00000001", BTC, ""},
		{"0.000001", USDT, ""},
		{"10000000000", NGN, ""},
		{"10000000000.00", USD, ""},
		{"10000000000", BTC, ""},
		{"1e10", GHS, ""},
		{"0", NGN, "greater than 0"},
		{"-0.00", NGN, "greater than 0"},
		{"-5", NGN, "greater than 0"},
		{"-0.001", NGN, "greater than 0"},
		{"10000000000.01", NGN, "at most 10000000000"},
		{"10000000000.00000001", BTC, "at most 10000000000"},
		{"10000000001", USDT, "at most 10000000000"},
		{"1e30", NGN, "at most 10000000000"},
		{"1.505", NGN, "at most 2 decimal places"},
		{"0.001", GHS, "at most 2 decimal places"},
		{"0.0000001", USDT, "at most 6 decimal places"},
		{"0.000000001", ETH, "at most 8 decimal places"},
		{"1e-30", BTC, "at most 8 decimal places"},
		{"1", "EUR", "unsupported"},
	}
	for _, tt := range tests {
		got := ValidateAmount(dec(t, tt.in), tt.c)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("ValidateAmount(%s %s) = %q, want %q", tt.in, tt.c, got, tt.want)
		}
	}
}

func TestRound(t *testing.T) {
	tests := []struct {
		in       string
		c        Currency
		down, up int64
	}{
		{"0", NGN, 0, 0},
		{"1.5", NGN, 150, 150},
		{"1.501", NGN, 150, 151},
		{"1.509", NGN, 150, 151},
		{"1.505", NGN, 150, 151},
		{"-1.501", NGN, -151, -150},
		{"-1.5", NGN, -150, -150},
		{"0.000000001", BTC, 0, 1},
		{"-0.000000001", BTC, -1, 0},
		{"0.0000005", USDT, 0, 1},
		{"1e2", USD, 10000, 10000},
		{"123.456789123", ETH, 12345678912, 12345678913},
		{"10000000000", BTC, 1e18, 1e18},
		{"92233720368.54775807", BTC, math.MaxInt64, math.MaxInt64},
		{"92233720368.547758071", BTC, math.MaxInt64, 0}, // up overflows
	}
	for _, tt := range tests {
		d := dec(t, tt.in)
		got, err := Round(d, tt.c, Down)
		if err != nil || got != tt.down {
			t.Errorf("Round(%s %s, Down) = %d, %v; want %d", tt.in, tt.c, got, err, tt.down)
		}
		got, err = Round(d, tt.c, Up)
		if tt.up == 0 && tt.down == math.MaxInt64 {
			if !errors.Is(err, ErrOverflow) {
				t.Errorf("Round(%s %s, Up) err = %v, want overflow", tt.in, tt.c, err)
			}
			continue
		}
		if err != nil || got != tt.up {
			t.Errorf("Round(%s %s, Up) = %d, %v; want %d", tt.in, tt.c, got, err, tt.up)
		}
	}
	for _, in := range []string{"92233720368.54775808", "-92233720368.54775809", "1e30", "1e2000"} {
		if _, err := Round(dec(t, in), BTC, Down); !errors.Is(err, ErrOverflow) {
			t.Errorf("Round(%s BTC) err = %v, want ErrOverflow", in, err)
		}
	}
	if _, err := Round(decimal.New(1, 0), "EUR", Down); err == nil {
		t.Error("Round with unknown currency must fail")
	}
}

func TestRoundQuo(t *testing.T) {
	tests := []struct {
		num, den string
		c        Currency
		down, up int64
	}{
		{"1", "3", NGN, 33, 34},
		{"-1", "3", NGN, -34, -33},
		{"1", "-3", NGN, -34, -33},
		{"-1", "-3", NGN, 33, 34},
		{"10", "4", NGN, 250, 250},
		{"100", "1600.5", USDT, 62480, 62481},            // 0.062480474...
		{"1", "0.00000003", NGN, 3333333333, 3333333334}, // 33333333.333...
		{"0.01", "100000000", BTC, 0, 1},                 // 1e-10 BTC
		{"9.99", "0.00999999", NGN, 99900, 99901},        // 999.000999...
		{"5000", "1580.25", USDT, 3164056, 3164057},      // 3.1640563...
		{"1e10", "1e-8", BTC, 0, 0},                      // 1e18 units: overflow
		{"123456789", "1000", BTC, 12345678900000, 12345678900000},
	}
	for _, tt := range tests {
		n, d := dec(t, tt.num), dec(t, tt.den)
		gd, errD := RoundQuo(n, d, tt.c, Down)
		gu, errU := RoundQuo(n, d, tt.c, Up)
		if tt.down == 0 && tt.up == 0 && tt.num != "0" {
			if !errors.Is(errD, ErrOverflow) || !errors.Is(errU, ErrOverflow) {
				t.Errorf("RoundQuo(%s/%s) errs = %v, %v; want ErrOverflow", tt.num, tt.den, errD, errU)
			}
			continue
		}
		if errD != nil || errU != nil || gd != tt.down || gu != tt.up {
			t.Errorf("RoundQuo(%s/%s %s) = %d,%d (%v,%v); want %d,%d", tt.num, tt.den, tt.c, gd, gu, errD, errU, tt.down, tt.up)
		}
	}
	if _, err := RoundQuo(decimal.New(1, 0), decimal.Zero, NGN, Down); err == nil {
		t.Error("RoundQuo by zero must fail")
	}
	// An exponent gap too large to compute is refused, not allocated.
	if _, err := RoundQuo(decimal.New(1, 0), decimal.New(1, -5000), NGN, Down); !errors.Is(err, ErrOverflow) {
		t.Errorf("huge shift err = %v", err)
	}
}

func TestParseJSONNumber(t *testing.T) {
	tests := []struct {
		raw  string
		want string // exact value via String(); "" means error
		err  error
	}{
		{`1`, "1", nil},
		{`0`, "0", nil},
		{`-0`, "0", nil},
		{`1.50`, "1.5", nil},
		{`-12.345`, "-12.345", nil},
		{` 100.25 `, "100.25", nil},
		{"\n\t42\r", "42", nil},
		{`0.1`, "0.1", nil}, // exact, not 0.1000000000000000055511151231257827
		{`10000000000`, "10000000000", nil},
		{`10000000000.01`, "10000000000.01", nil},
		{`123456789012345678901234567890.123456789`, "123456789012345678901234567890.123456789", nil},
		{`1e2`, "100", nil},
		{`1E2`, "100", nil},
		{`1e+2`, "100", nil},
		{`15e-1`, "1.5", nil},
		{`1.5e-8`, "0.000000015", nil},
		{`1e30`, "1000000000000000000000000000000", nil},
		{`1e-30`, "0.000000000000000000000000000001", nil},
		{`1e0000000000000000030`, "1000000000000000000000000000000", nil},
		{`1e31`, "", ErrNumberRange},
		{`1e-31`, "", ErrNumberRange},
		{`1e999999999999999999999999`, "", ErrNumberRange},
		{`1e-2147483649`, "", ErrNumberRange},
		{`1` + strings.Repeat("0", 100), "", ErrNumberRange},
		{`"1"`, "", ErrNotNumber},
		{`"1.5"`, "", ErrNotNumber},
		{`null`, "", ErrNotNumber},
		{`true`, "", ErrNotNumber},
		{`{}`, "", ErrNotNumber},
		{`[1]`, "", ErrNotNumber},
		{``, "", ErrNotNumber},
		{`   `, "", ErrNotNumber},
		{`+1`, "", ErrNotNumber},
		{`.5`, "", ErrNotNumber},
		{`1.`, "", ErrNotNumber},
		{`01`, "", ErrNotNumber},
		{`-`, "", ErrNotNumber},
		{`--1`, "", ErrNotNumber},
		{`1e`, "", ErrNotNumber},
		{`1e+`, "", ErrNotNumber},
		{`1.2.3`, "", ErrNotNumber},
		{`1 2`, "", ErrNotNumber},
		{`0x10`, "", ErrNotNumber},
		{`NaN`, "", ErrNotNumber},
		{`Infinity`, "", ErrNotNumber},
		{`1_000`, "", ErrNotNumber},
		{"\u22121", "", ErrNotNumber},
		{`"` + strings.Repeat("9", 200) + `"`, "", ErrNotNumber},
	}
	for _, tt := range tests {
		got, err := ParseJSONNumber(json.RawMessage(tt.raw))
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("ParseJSONNumber(%q) = %v, %v; want %v", tt.raw, got, err, tt.err)
			}
			continue
		}
		if err != nil || got.String() != tt.want {
			t.Errorf("ParseJSONNumber(%q) = %s, %v; want %s", tt.raw, got, err, tt.want)
		}
	}
	if _, err := ParseJSONNumber(nil); !errors.Is(err, ErrNotNumber) {
		t.Errorf("nil raw: %v", err)
	}
}

// ParseJSONNumber must agree with encoding/json on what is a number, and
// never panic; the seeds run as part of go test.
func FuzzParseJSONNumber(f *testing.F) {
	for _, s := range []string{"1", "-0.5", "1e30", "1e31", `"1"`, "null", "01", "1.", "1e-5", "9.99", "0}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseJSONNumber(json.RawMessage(s))
		var n json.Number
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		jsonErr := dec.Decode(&v)
		n, isNum := v.(json.Number)
		isNum = isNum && jsonErr == nil && json.Valid([]byte(s))
		if err == nil {
			if !isNum {
				t.Fatalf("accepted %q, which encoding/json does not read as one number", s)
			}
			back, perr := decimal.NewFromString(string(n))
			if perr != nil || !back.Equal(d) {
				t.Fatalf("%q parsed to %s, json says %s", s, d, n)
			}
		} else if errors.Is(err, ErrNotNumber) && isNum {
			t.Fatalf("rejected %q as not a number, but it is one", s)
		}
	})
}

// RoundQuo must equal floor/ceil of the exact rational num/den·10^decimals.
// The seeds run in every go test; `go test -fuzz FuzzRoundQuo` explores more.
func FuzzRoundQuo(f *testing.F) {
	f.Add(int64(1), int32(0), int64(3), int32(0), uint8(0))
	f.Add(int64(-1), int32(-2), int64(3), int32(5), uint8(3))
	f.Add(int64(99999999), int32(-8), int64(-7), int32(-3), uint8(6))
	f.Add(int64(math.MaxInt64), int32(-8), int64(1), int32(0), uint8(5))
	f.Add(int64(math.MinInt64), int32(-2), int64(-1), int32(0), uint8(0))
	f.Fuzz(func(t *testing.T, a int64, ea int32, b int64, eb int32, ci uint8) {
		if b == 0 {
			return
		}
		ea, eb = ea%40, eb%40
		c := All()[int(ci)%len(All())]
		num, den := decimal.New(a, ea), decimal.New(b, eb)
		x := new(big.Rat).Quo(num.Rat(), den.Rat())
		x.Mul(x, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.Decimals())), nil)))
		floor := new(big.Int).Div(x.Num(), x.Denom()) // Euclidean, Denom > 0: floor
		ceil := new(big.Int).Neg(new(big.Int).Div(new(big.Int).Neg(x.Num()), x.Denom()))
		for _, tc := range []struct {
			dir  Direction
			want *big.Int
		}{{Down, floor}, {Up, ceil}} {
			got, err := RoundQuo(num, den, c, tc.dir)
			if !tc.want.IsInt64() {
				if !errors.Is(err, ErrOverflow) {
					t.Fatalf("%s/%s %s dir %d: got %d, %v; want overflow", num, den, c, tc.dir, got, err)
				}
				continue
			}
			if err != nil || got != tc.want.Int64() {
				t.Fatalf("%s/%s %s dir %d: got %d, %v; want %s", num, den, c, tc.dir, got, err, tc.want)
			}
		}
	})
}
