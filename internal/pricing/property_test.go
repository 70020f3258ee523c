package pricing

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"

	"merchantpay/internal/money"
)

// The properties are checked against an independent oracle in math/big.Rat
// (exact rationals), not against the package's own decimal arithmetic.

func propPairs() []Pair {
	return []Pair{
		{money.USDT, money.NGN}, {money.USDC, money.NGN}, {money.BTC, money.NGN}, {money.ETH, money.NGN},
		{money.USD, money.NGN}, {money.USDT, money.GHS}, {money.BTC, money.GHS}, {money.ETH, money.GHS},
		{money.USD, money.GHS}, {money.USDT, money.USD}, {money.BTC, money.USD},
	}
}

type propCase struct {
	pair        Pair
	side        Side
	mid, spread decimal.Decimal
	fee         FeeSpec
	amount      uint64 // raw; clamped to each currency's range when used
}

// makeCase maps arbitrary inputs onto the documented ranges: mid from 0.0001
// to about 10^8, spread 0 to 10%, flat fees up to 10^5 minor units (sometimes
// with one sub-minor decimal), percentages up to 9.99% (sometimes up to
// 99.99%), and amounts spread log-uniformly over 1 .. MaxMinor.
func makeCase(pairIdx uint8, buy bool, midMant uint32, midExp uint8, spreadBp uint16, flat bool, feeMant uint32, feeExp uint8, amount uint64) propCase {
	pairs := propPairs()
	c := propCase{pair: pairs[int(pairIdx)%len(pairs)], side: Sell, amount: amount}
	if buy {
		c.side = Buy
	}
	c.mid = decimal.New(int64(1+midMant%99_999), int32(midExp%12)-8)
	if floor := decimal.New(1, -4); c.mid.LessThan(floor) {
		c.mid = floor
	}
	c.spread = decimal.New(int64(spreadBp%1001), -4)
	to := c.pair.Asset
	if c.side == Sell {
		to = c.pair.Fiat
	}
	if flat {
		c.fee = FeeSpec{Flat, decimal.New(int64(feeMant%100_000), -to.Decimals()-int32(feeExp%2))}
	} else if feeExp%5 == 0 {
		c.fee = FeeSpec{Percentage, decimal.New(int64(feeMant%10_000), -2)}
	} else {
		c.fee = FeeSpec{Percentage, decimal.New(int64(feeMant%1_000), -2)}
	}
	return c
}

// amountIn spreads raw over 1 .. MaxMinor(c), log-uniformly by digit count.
func amountIn(raw uint64, c money.Currency) int64 {
	digits := 1 + (raw>>58)%19
	mod := uint64(1)
	for range digits {
		mod *= 10
	}
	return min(1+int64(raw%mod), money.MaxMinor(c))
}

func rat(x decimal.Decimal) *big.Rat { return x.Rat() }

func minorRat(m int64, c money.Currency) *big.Rat {
	return new(big.Rat).SetFrac(big.NewInt(m), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.Decimals())), nil))
}

// toGrid returns floor (up=false) or ceil of x on c's minor-unit grid.
func toGrid(x *big.Rat, c money.Currency, up bool) *big.Int {
	s := new(big.Rat).Mul(x, minorRat(1, c).Inv(minorRat(1, c)))
	q, m := new(big.Int).DivMod(s.Num(), s.Denom(), new(big.Int))
	if up && m.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// oracleForward is the exact quote arithmetic: gross = from × rate when
// selling the asset, from ÷ rate when buying it; fee flat or gross × p/100;
// to_amount = gross − fee; all in to_currency units, before any rounding.
func oracleForward(side Side, rate *big.Rat, fee FeeSpec, from money.Currency, fromMinor int64) (gross, net, feeAmt *big.Rat) {
	a := minorRat(fromMinor, from)
	gross = new(big.Rat).Mul(a, rate)
	if side == Buy {
		gross = new(big.Rat).Quo(a, rate)
	}
	if fee.Type == Flat {
		feeAmt = rat(fee.Value)
	} else {
		feeAmt = new(big.Rat).Mul(gross, new(big.Rat).Quo(rat(fee.Value), big.NewRat(100, 1)))
	}
	return gross, new(big.Rat).Sub(gross, feeAmt), feeAmt
}

func checkCase(t *testing.T, c propCase) {
	t.Helper()
	rate := Rate(c.mid, c.spread, c.side)

	// (d) rates: at most RateDecimals places, rounded toward the service by
	// less than one unit of the last place.
	if !rate.Equal(rate.Truncate(RateDecimals)) || rate.Sign() <= 0 {
		t.Fatalf("%+v: rate %s", c, rate)
	}
	exactRate := c.mid.Mul(decimal.New(1, 0).Add(c.spread))
	if c.side == Sell {
		exactRate = c.mid.Mul(decimal.New(1, 0).Sub(c.spread))
	}
	if diff := rate.Sub(exactRate).Abs(); diff.GreaterThanOrEqual(decimal.New(1, -RateDecimals)) ||
		(c.side == Buy && rate.LessThan(exactRate)) || (c.side == Sell && rate.GreaterThan(exactRate)) {
		t.Fatalf("%+v: rate %s vs exact %s", c, rate, exactRate)
	}

	from, to := c.pair.Fiat, c.pair.Asset
	if c.side == Sell {
		from, to = c.pair.Asset, c.pair.Fiat
	}
	if s, err := SideFor(c.pair, from, to); err != nil || s != c.side {
		t.Fatalf("SideFor(%s, %s, %s) = %s, %v", c.pair, from, to, s, err)
	}
	r := rat(rate)
	maxTo := big.NewInt(money.MaxMinor(to))
	maxFrom := big.NewInt(money.MaxMinor(from))

	// Forward: QuoteFromAmount.
	fromMinor := amountIn(c.amount, from)
	q, err := QuoteFromAmount(from, to, c.side, rate, c.fee, fromMinor)
	_, net, feeAmt := oracleForward(c.side, r, c.fee, from, fromMinor)
	netFloor, feeCeil := toGrid(net, to, false), toGrid(feeAmt, to, true)
	switch {
	case errors.Is(err, ErrAmountTooSmall):
		if netFloor.Sign() > 0 {
			t.Fatalf("%+v from %d: too small, but exact to_amount is %s", c, fromMinor, net.FloatString(12))
		}
	case errors.Is(err, ErrAmountTooLarge):
		if netFloor.Cmp(maxTo) <= 0 && feeCeil.Cmp(maxTo) <= 0 {
			t.Fatalf("%+v from %d: too large, but exact to_amount is %s", c, fromMinor, net.FloatString(12))
		}
	case err != nil:
		t.Fatalf("%+v from %d: %v", c, fromMinor, err)
	default:
		// (b) nothing negative; amounts as given.
		if q.FromMinor != fromMinor || q.ToMinor <= 0 || q.FeeMinor < 0 || !q.Rate.Equal(rate) {
			t.Fatalf("%+v: forward quote %+v", c, q)
		}
		// (c) to_amount is exact, rounded down: never more, less by under one minor unit.
		if netFloor.Cmp(big.NewInt(q.ToMinor)) != 0 {
			t.Fatalf("%+v: to %d, exact %s", c, q.ToMinor, net.FloatString(12))
		}
		// The fee shown is the exact fee rounded up.
		if feeCeil.Cmp(big.NewInt(q.FeeMinor)) != 0 {
			t.Fatalf("%+v: fee %d, exact %s", c, q.FeeMinor, feeAmt.FloatString(12))
		}
		// (d) every amount is on its currency's grid and prints exactly.
		for _, a := range []struct {
			m int64
			c money.Currency
		}{{q.FromMinor, from}, {q.ToMinor, to}, {q.FeeMinor, to}} {
			if back, err := money.ToMinor(decimal.RequireFromString(money.Format(a.m, a.c)), a.c); err != nil || back != a.m {
				t.Fatalf("%+v: %d %s does not round-trip through Format", c, a.m, a.c)
			}
		}
		// (a) asking for that to_amount never costs more than what produced it.
		back, err := QuoteToAmount(from, to, c.side, rate, c.fee, q.ToMinor)
		if err != nil || back.ToMinor != q.ToMinor || back.FromMinor > fromMinor || back.FromMinor <= 0 {
			t.Fatalf("%+v: reverse of %+v is %+v, %v", c, q, back, err)
		}
	}

	// Reverse: QuoteToAmount.
	toMinor := amountIn(c.amount*0x9E3779B97F4A7C15+1, to)
	rq, err := QuoteToAmount(from, to, c.side, rate, c.fee, toMinor)
	t0 := minorRat(toMinor, to)
	gross := new(big.Rat).Add(t0, rat(c.fee.Value))
	if c.fee.Type == Percentage {
		gross = new(big.Rat).Quo(new(big.Rat).Mul(t0, big.NewRat(100, 1)), new(big.Rat).Sub(big.NewRat(100, 1), rat(c.fee.Value)))
	}
	exactFrom := new(big.Rat).Quo(gross, r)
	if c.side == Buy {
		exactFrom = new(big.Rat).Mul(gross, r)
	}
	fromCeil := toGrid(exactFrom, from, true)
	switch {
	case errors.Is(err, ErrAmountTooLarge):
		if fromCeil.Cmp(maxFrom) <= 0 {
			_, n2, f2 := oracleForward(c.side, r, c.fee, from, fromCeil.Int64())
			if toGrid(n2, to, false).Cmp(maxTo) <= 0 && toGrid(f2, to, true).Cmp(maxTo) <= 0 {
				t.Fatalf("%+v to %d: too large, but needs only %s", c, toMinor, fromCeil)
			}
		}
	case err != nil:
		t.Fatalf("%+v to %d: %v", c, toMinor, err)
	default:
		// (b), and the amount asked for is the amount quoted.
		if rq.ToMinor != toMinor || rq.FromMinor <= 0 || rq.FeeMinor < 0 || !rq.Rate.Equal(rate) {
			t.Fatalf("%+v: reverse quote %+v", c, rq)
		}
		// (c) from_amount is the exact need rounded up: never less, more by under one minor unit.
		if fromCeil.Cmp(big.NewInt(rq.FromMinor)) != 0 {
			t.Fatalf("%+v: from %d, exact %s", c, rq.FromMinor, exactFrom.FloatString(12))
		}
		// (a) converting from_amount forward pays at least to_amount, and at
		// most one to-minor unit or what one from-minor unit converts to more.
		g2, n2, f2 := oracleForward(c.side, r, c.fee, from, rq.FromMinor)
		got := toGrid(n2, to, false)
		one, _, _ := oracleForward(c.side, r, c.fee, from, 1)
		tol := toGrid(one, to, true)
		if tol.Cmp(big.NewInt(1)) < 0 {
			tol = big.NewInt(1)
		}
		if slack := new(big.Int).Sub(got, big.NewInt(toMinor)); slack.Sign() < 0 || slack.Cmp(tol) > 0 {
			t.Fatalf("%+v: from %d converts to %s, quote says %d (tolerance %s, gross %s)", c, rq.FromMinor, got, toMinor, tol, g2.FloatString(12))
		}
		// The fee is the forward fee of from_amount, rounded up.
		if toGrid(f2, to, true).Cmp(big.NewInt(rq.FeeMinor)) != 0 {
			t.Fatalf("%+v: reverse fee %d, exact %s", c, rq.FeeMinor, f2.FloatString(12))
		}
	}
}

// TestQuoteProperties runs checkCase on a fixed pseudo-random sample, so a
// failure always reproduces.
func TestQuoteProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261121, 930))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for range n {
		checkCase(t, makeCase(uint8(rng.Uint32()), rng.IntN(2) == 0, rng.Uint32(), uint8(rng.Uint32()),
			uint16(rng.Uint32()), rng.IntN(2) == 0, rng.Uint32(), uint8(rng.Uint32()), rng.Uint64()))
	}
}

// FuzzQuote explores further with `go test -fuzz FuzzQuote`; its seeds run
// in every go test: edges of each range.
func FuzzQuote(f *testing.F) {
	f.Add(uint8(0), true, uint32(1500), uint8(8), uint16(100), true, uint32(5000), uint8(0), uint64(1))
	f.Add(uint8(2), false, uint32(99_998), uint8(11), uint16(1000), false, uint32(999), uint8(1), ^uint64(0))
	f.Add(uint8(4), true, uint32(0), uint8(0), uint16(0), false, uint32(9_999), uint8(0), uint64(1)<<63)
	f.Add(uint8(8), false, uint32(155), uint8(7), uint16(200), true, uint32(99_999), uint8(1), uint64(12345))
	f.Add(uint8(7), true, uint32(4), uint8(12), uint16(125), false, uint32(25), uint8(2), uint64(0))
	f.Add(uint8(10), false, uint32(99_998), uint8(11), uint16(0), true, uint32(0), uint8(0), uint64(7)<<58)
	f.Fuzz(func(t *testing.T, pairIdx uint8, buy bool, midMant uint32, midExp uint8, spreadBp uint16, flat bool, feeMant uint32, feeExp uint8, amount uint64) {
		checkCase(t, makeCase(pairIdx, buy, midMant, midExp, spreadBp, flat, feeMant, feeExp, amount))
	})
}
