// Package pricing is the quote arithmetic (rate from mid and spread, gross,
// fee and to_amount, or from_amount solved from a given to_amount): pure
// functions from a mid price, a spread, a fee rule and one amount to a quote.
// Nothing here reads configuration, the clock or the database.
//
// Every value that leaves this package is either an exact decimal (the rate)
// or int64 minor units (the amounts). All intermediate arithmetic is exact:
// products are exact decimals, and quotients are never materialised but handed
// as numerator/denominator to money.RoundQuo, the service's one rounding
// function. Rounding always favours the service by less than one minor unit:
//
//   - rate: BUY rounded up, SELL rounded down, to RateDecimals places;
//   - to_amount: rounded down (the service never pays out more than the exact
//     math says, and at most one minor unit less);
//   - fee: rounded up, but to_amount is computed from the exact fee, so the
//     two roundings never compound against the customer;
//   - from_amount (when to_amount is given): rounded up.
package pricing

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"merchantpay/internal/money"
)

// RateDecimals is the fixed precision of every rate the service shows. Eight
// places keep at least four significant digits for rates down to 0.0001 and
// are far finer than any fiat minor unit for large rates (BTC/NGN ≈ 10^8).
// Quotes use the rounded rate, so the rate shown is the rate applied.
const RateDecimals = 8

var (
	// ErrAmountTooSmall: the quote would pay out nothing (to_amount ≤ 0 after
	// the fee and rounding); the caller answers AMOUNT_TOO_SMALL.
	ErrAmountTooSmall = errors.New("amount too small")
	// ErrAmountTooLarge: an amount of the quote is above money.MaxUnits of its
	// currency (or does not fit an int64 at all).
	ErrAmountTooLarge = errors.New("amount too large")
)

// Pair is a supported currency pair, written ASSET/FIAT. The more valuable
// currency is the asset side, so USD is the asset in USD/NGN.
type Pair struct {
	Asset money.Currency
	Fiat  money.Currency
}

// ParsePair reads "ASSET/FIAT" (upper case, as configured by the operator).
func ParsePair(s string) (Pair, error) {
	a, f, ok := strings.Cut(s, "/")
	if !ok {
		return Pair{}, fmt.Errorf("pair %q: want ASSET/FIAT", s)
	}
	asset, okA := money.Parse(a)
	fiat, okF := money.Parse(f)
	if !okA || !okF {
		return Pair{}, fmt.Errorf("pair %q: unknown currency", s)
	}
	p := Pair{Asset: asset, Fiat: fiat}
	return p, p.Validate()
}

// Validate checks that the pair has two different currencies and a fiat
// currency on the fiat side (the rate is always fiat per asset).
func (p Pair) Validate() error {
	if p.Asset.Decimals() < 0 || p.Fiat.Decimals() < 0 {
		return fmt.Errorf("pair %s: unknown currency", p)
	}
	if p.Asset == p.Fiat {
		return fmt.Errorf("pair %s: same currency on both sides", p)
	}
	if !p.Fiat.IsFiat() {
		return fmt.Errorf("pair %s: quote side must be fiat", p)
	}
	return nil
}

// String returns "ASSET/FIAT".
func (p Pair) String() string { return string(p.Asset) + "/" + string(p.Fiat) }

// Side is the market side of a conversion, seen from the customer.
type Side string

const (
	// Buy converts the fiat side into the asset side.
	Buy Side = "BUY"
	// Sell converts the asset side into the fiat side.
	Sell Side = "SELL"
)

// SideFor tells which side a conversion from → to is on pair p, or fails if
// from and to are not the pair's two currencies.
func SideFor(p Pair, from, to money.Currency) (Side, error) {
	switch {
	case from == p.Fiat && to == p.Asset:
		return Buy, nil
	case from == p.Asset && to == p.Fiat:
		return Sell, nil
	}
	return "", fmt.Errorf("%s → %s is not a conversion on %s", from, to, p)
}

// Rate is the rate for side: mid × (1 + spread) to BUY, mid × (1 − spread) to
// SELL, with spread a fraction (0.01 is 1%). It is rounded to RateDecimals
// places in the service's favour: up for BUY (the customer pays more fiat
// per asset), down for SELL (the customer gets less fiat per asset). The
// caller checks that mid > 0 and 0 ≤ spread < 1 when it loads configuration;
// QuoteFromAmount and QuoteToAmount refuse a rate that is not positive.
func Rate(mid, spread decimal.Decimal, side Side) decimal.Decimal {
	one := decimal.New(1, 0)
	if side == Buy {
		return mid.Mul(one.Add(spread)).RoundCeil(RateDecimals)
	}
	return mid.Mul(one.Sub(spread)).RoundFloor(RateDecimals)
}

// FeeType is how a fee is given.
type FeeType string

const (
	// Flat is a fixed amount in to_currency units.
	Flat FeeType = "FLAT"
	// Percentage is a percentage of the gross converted amount.
	Percentage FeeType = "PERCENTAGE"
)

// FeeSpec is a configured fee: Value is to_currency units for Flat, and a
// percentage (1.5 means 1.5%) for Percentage.
type FeeSpec struct {
	Type  FeeType
	Value decimal.Decimal
}

// Validate checks the fee rule: a flat fee is ≥ 0; a percentage is in
// [0, 100), since 100% or more would leave nothing to pay out and make the
// reverse quote divide by zero.
func (f FeeSpec) Validate() error {
	switch f.Type {
	case Flat:
		if f.Value.Sign() < 0 {
			return errors.New("flat fee must not be negative")
		}
	case Percentage:
		if f.Value.Sign() < 0 || f.Value.GreaterThanOrEqual(decimal.New(100, 0)) {
			return errors.New("percentage fee must be at least 0 and below 100")
		}
	default:
		return fmt.Errorf("unknown fee type %q", string(f.Type))
	}
	return nil
}

// Quote is a priced conversion. Amounts are minor units of their currency;
// FeeMinor is in To's minor units and is already deducted from ToMinor.
type Quote struct {
	From, To  money.Currency
	Side      Side
	Rate      decimal.Decimal
	FromMinor int64
	ToMinor   int64
	FeeMinor  int64
}

// QuoteFromAmount prices converting fromMinor of from into to at rate:
// gross = from × rate when selling the asset, from ÷ rate when buying it; the
// fee is the flat amount or gross × p/100; to_amount = gross − fee rounded
// down; the fee shown is rounded up. to_amount ≤ 0 gives ErrAmountTooSmall.
func QuoteFromAmount(from, to money.Currency, side Side, rate decimal.Decimal, fee FeeSpec, fromMinor int64) (Quote, error) {
	if err := checkInputs(from, to, side, rate, fee); err != nil {
		return Quote{}, err
	}
	if fromMinor <= 0 {
		return Quote{}, errors.New("from amount must be positive")
	}
	// gross = gN/gD in to_currency units.
	one, hundred := decimal.New(1, 0), decimal.New(100, 0)
	gN, gD := money.FromMinor(fromMinor, from).Mul(rate), one
	if side == Buy {
		gN, gD = money.FromMinor(fromMinor, from), rate
	}
	var toN, toD, feeN, feeD decimal.Decimal
	switch fee.Type {
	case Flat:
		// to = gross − F = (gN − F·gD)/gD
		toN, toD = gN.Sub(fee.Value.Mul(gD)), gD
		feeN, feeD = fee.Value, one
	case Percentage:
		// to = gross·(100 − p)/100, fee = gross·p/100
		toN, toD = gN.Mul(hundred.Sub(fee.Value)), gD.Mul(hundred)
		feeN, feeD = gN.Mul(fee.Value), gD.Mul(hundred)
	}
	if toN.Sign() <= 0 {
		return Quote{}, ErrAmountTooSmall
	}
	toMinor, err := money.RoundQuo(toN, toD, to, money.Down)
	if err != nil {
		return Quote{}, tooLarge(err)
	}
	if toMinor <= 0 {
		return Quote{}, ErrAmountTooSmall
	}
	feeMinor, err := money.RoundQuo(feeN, feeD, to, money.Up)
	if err != nil {
		return Quote{}, tooLarge(err)
	}
	if toMinor > money.MaxMinor(to) || feeMinor > money.MaxMinor(to) {
		return Quote{}, ErrAmountTooLarge
	}
	return Quote{From: from, To: to, Side: side, Rate: rate,
		FromMinor: fromMinor, ToMinor: toMinor, FeeMinor: feeMinor}, nil
}

// QuoteToAmount prices paying out exactly toMinor of to. It solves for the
// gross (to + F for a flat fee, to ÷ (1 − p/100) for a percentage), converts
// it back (gross ÷ rate when selling the asset, gross × rate when buying it)
// and rounds from_amount up, so the service never receives less than needed.
// ToMinor stays exactly what was asked. The fee is the fee QuoteFromAmount
// charges on that from_amount, so a quote reads the same whichever amount
// was given; converting FromMinor forward yields at least ToMinor, and at
// most what one minor unit of from converts to more.
func QuoteToAmount(from, to money.Currency, side Side, rate decimal.Decimal, fee FeeSpec, toMinor int64) (Quote, error) {
	if err := checkInputs(from, to, side, rate, fee); err != nil {
		return Quote{}, err
	}
	if toMinor <= 0 {
		return Quote{}, ErrAmountTooSmall
	}
	if toMinor > money.MaxMinor(to) {
		return Quote{}, ErrAmountTooLarge
	}
	// gross = gN/gD in to_currency units.
	hundred := decimal.New(100, 0)
	t := money.FromMinor(toMinor, to)
	gN, gD := t.Add(fee.Value), decimal.New(1, 0)
	if fee.Type == Percentage {
		gN, gD = t.Mul(hundred), hundred.Sub(fee.Value)
	}
	// from = fN/fD in from_currency units.
	fN, fD := gN, gD.Mul(rate)
	if side == Buy {
		fN, fD = gN.Mul(rate), gD
	}
	fromMinor, err := money.RoundQuo(fN, fD, from, money.Up)
	if err != nil {
		return Quote{}, tooLarge(err)
	}
	if fromMinor > money.MaxMinor(from) {
		return Quote{}, ErrAmountTooLarge
	}
	fwd, err := QuoteFromAmount(from, to, side, rate, fee, fromMinor)
	if err != nil {
		return Quote{}, err
	}
	fwd.ToMinor = toMinor
	return fwd, nil
}

func checkInputs(from, to money.Currency, side Side, rate decimal.Decimal, fee FeeSpec) error {
	if from.Decimals() < 0 || to.Decimals() < 0 {
		return fmt.Errorf("unknown currency in %s → %s", from, to)
	}
	if from == to {
		return errors.New("from and to currency are the same")
	}
	if side != Buy && side != Sell {
		return fmt.Errorf("unknown side %q", string(side))
	}
	if rate.Sign() <= 0 {
		return errors.New("rate must be positive")
	}
	return fee.Validate()
}

func tooLarge(err error) error {
	if errors.Is(err, money.ErrOverflow) {
		return fmt.Errorf("%w: %w", ErrAmountTooLarge, err)
	}
	return err
}
