// Package money holds the service's currencies and the exact arithmetic on
// amounts. Amounts are stored as int64 minor units; decimals are only ever
// parsed from exact text, never through float64, and every rounding of the
// service goes through RoundQuo (Round is its decimal special case), so there
// is one place that decides which way a value moves onto the minor-unit grid.
package money

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/shopspring/decimal"
)

// Currency is an upper-case ISO-like currency code known to the service.
type Currency string

const (
	NGN  Currency = "NGN"
	GHS  Currency = "GHS"
	USD  Currency = "USD"
	USDT Currency = "USDT"
	USDC Currency = "USDC"
	BTC  Currency = "BTC"
	ETH  Currency = "ETH"
)

// MaxUnits is the largest amount, in whole units of any currency, that the
// service accepts. With at most 8 decimals, MaxUnits in minor units is 10^18,
// which fits an int64 (max ≈ 9.2·10^18).
const MaxUnits = 10_000_000_000

// All returns every supported currency, fiat first, in a stable order.
// A fresh slice each call, so callers may modify it.
func All() []Currency {
	return []Currency{NGN, GHS, USD, USDT, USDC, BTC, ETH}
}

// Parse accepts exactly the upper-case codes of All; anything else
// (lower case, padding, unknown codes) is not a currency.
func Parse(code string) (Currency, bool) {
	c := Currency(code)
	if c.Decimals() < 0 {
		return "", false
	}
	return c, true
}

// Decimals is the number of decimal places of c's minor unit, or -1 for an
// unknown currency (which Parse never returns).
func (c Currency) Decimals() int32 {
	switch c {
	case NGN, GHS, USD:
		return 2
	case USDT, USDC:
		return 6
	case BTC, ETH:
		return 8
	}
	return -1
}

// IsFiat reports whether c is a fiat currency (NGN, GHS, USD).
func (c Currency) IsFiat() bool { return c == NGN || c == GHS || c == USD }

// IsAsset reports whether c is a crypto asset (USDT, USDC, BTC, ETH).
func (c Currency) IsAsset() bool { return c == USDT || c == USDC || c == BTC || c == ETH }

// String returns the code.
func (c Currency) String() string { return string(c) }

// MaxMinor is MaxUnits expressed in c's minor units.
func MaxMinor(c Currency) int64 {
	m := int64(MaxUnits)
	for range c.Decimals() {
		m *= 10
	}
	return m
}

// ErrOverflow is returned when a value does not fit an int64 of minor units
// (or is too far off the grid to be computed at all).
var ErrOverflow = errors.New("amount out of range")

// ErrTooManyDecimals is returned by ToMinor for a value that is not on the
// currency's minor-unit grid.
var ErrTooManyDecimals = errors.New("too many decimal places")

// ToMinor converts an exact decimal to minor units of c. It refuses values
// with more decimals than c allows rather than rounding them: a rounding here
// would silently change an amount the caller sent. Trailing zeros are fine.
func ToMinor(d decimal.Decimal, c Currency) (int64, error) {
	dec := c.Decimals()
	if dec < 0 {
		return 0, fmt.Errorf("unknown currency %q", string(c))
	}
	down, err := Round(d, c, Down)
	if err != nil {
		return 0, err
	}
	if !FromMinor(down, c).Equal(d) {
		return 0, fmt.Errorf("%w: %s allows %d", ErrTooManyDecimals, c, dec)
	}
	return down, nil
}

// FromMinor converts minor units of c to an exact decimal with exactly c's
// decimals as its exponent (150 NGN minor → 1.50).
func FromMinor(m int64, c Currency) decimal.Decimal {
	return decimal.New(m, -c.Decimals())
}

// Format renders minor units of c as a plain decimal string: no exponent, no
// trailing fractional zeros ("1.5", "100", "0.00000001", "-2.25"). It is
// built from the integer directly so that no package-level setting of the
// decimal library can change what the API prints.
func Format(m int64, c Currency) string {
	dec := int(c.Decimals())
	neg := m < 0
	// Work on the magnitude as an unsigned value so MinInt64 is safe.
	u := uint64(m)
	if neg {
		u = -u
	}
	s := fmt.Sprintf("%0*d", dec+1, u)
	intPart, frac := s[:len(s)-dec], strings.TrimRight(s[len(s)-dec:], "0")
	out := intPart
	if frac != "" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	return out
}

// ValidateAmount checks an amount given by a client (it must be > 0, at most
// MaxUnits, with no more decimals than c allows) and returns "" when it is
// acceptable, else a short human message for a field error.
func ValidateAmount(d decimal.Decimal, c Currency) string {
	dec := c.Decimals()
	switch {
	case dec < 0:
		return "unsupported currency"
	case d.Sign() <= 0:
		return "must be greater than 0"
	case d.GreaterThan(decimal.New(MaxUnits, 0)):
		return "must be at most 10000000000"
	}
	if _, err := ToMinor(d, c); err != nil {
		return fmt.Sprintf("must have at most %d decimal places for %s", dec, c)
	}
	return ""
}

// Direction says which way a value off the minor-unit grid moves.
type Direction int

const (
	// Down rounds toward negative infinity (floor).
	Down Direction = iota
	// Up rounds toward positive infinity (ceiling).
	Up
)

// maxShift bounds the power of ten RoundQuo will build. Real amounts, rates and
// fees stay within a few dozen decimal orders; anything beyond this is garbage
// input, refused instead of allocating huge integers.
const maxShift = 1000

// Round puts d on c's minor-unit grid in direction dir and returns the result
// in minor units, or ErrOverflow if that does not fit an int64.
func Round(d decimal.Decimal, c Currency, dir Direction) (int64, error) {
	return RoundQuo(d, decimal.New(1, 0), c, dir)
}

// RoundQuo rounds the exact quotient num/den onto c's minor-unit grid in
// direction dir and returns minor units. Quotients (such as an amount divided
// by a rate) rarely terminate, so they are never materialised as a decimal:
// rounding a truncated or half-up approximation could move a value that sits
// just below a grid line onto the wrong side of it. Here the integer division
// is exact. It fails with ErrOverflow if the result does not fit an int64, and
// with an error for a zero denominator or an unknown currency.
func RoundQuo(num, den decimal.Decimal, c Currency, dir Direction) (int64, error) {
	dec := c.Decimals()
	if dec < 0 {
		return 0, fmt.Errorf("unknown currency %q", string(c))
	}
	if den.Sign() == 0 {
		return 0, errors.New("division by zero")
	}
	// num = a·10^ea, den = b·10^eb, so num/den·10^dec = a·10^k / b with
	// k = ea + dec − eb; move the power of ten to whichever side keeps it whole.
	a, b := num.Coefficient(), den.Coefficient()
	k := int64(num.Exponent()) + int64(dec) - int64(den.Exponent())
	if k > maxShift || k < -maxShift {
		return 0, ErrOverflow
	}
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(abs64(k)), nil)
	if k >= 0 {
		a.Mul(a, p)
	} else {
		b.Mul(b, p)
	}
	if b.Sign() < 0 {
		a.Neg(a)
		b.Neg(b)
	}
	// With b > 0, Euclidean division (big.Int.Div) is the floor.
	var q big.Int
	if dir == Up {
		q.Div(a.Neg(a), b)
		q.Neg(&q)
	} else {
		q.Div(a, b)
	}
	if !q.IsInt64() {
		return 0, ErrOverflow
	}
	return q.Int64(), nil
}

func abs64(k int64) int64 {
	if k < 0 {
		return -k
	}
	return k
}
