package rates

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
	"merchantpay/internal/pricing"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// Indicative is a rate for one direction of a pair, without an amount.
type Indicative struct {
	Pair     pricing.Pair
	From, To money.Currency
	Side     pricing.Side
	Rate     decimal.Decimal
	// Fee is the swap fee rule in to-currency terms: a percentage, or a
	// flat amount of To.
	Fee pricing.FeeSpec
	// RefreshIn is the whole seconds until the rate may change.
	RefreshIn int64
}

// PairRates is one pair's two indicative rates.
type PairRates struct {
	Pair      pricing.Pair
	Buy, Sell Indicative
}

// Rates returns the indicative rates of every pair enabled for the merchant
// of ctx, by pair id.
func (s *Service) Rates(ctx context.Context) ([]PairRates, error) {
	t, ok := tenant.From(ctx)
	if !ok {
		return nil, tenant.ErrNoTenant
	}
	rows, err := s.enabledPairs(ctx, s.db.Reader(), t.MerchantID)
	if err != nil {
		return nil, store.Classify(err)
	}
	now := s.clock.Now()
	out := make([]PairRates, 0, len(rows))
	for _, r := range rows {
		p := rowPair(r)
		buy, err := s.indicative(r, p, pricing.Buy, now)
		if err != nil {
			return nil, err
		}
		sell, err := s.indicative(r, p, pricing.Sell, now)
		if err != nil {
			return nil, err
		}
		out = append(out, PairRates{Pair: p, Buy: buy, Sell: sell})
	}
	return out, nil
}

// Rate returns the indicative rate converting q.FromCurrency into
// q.ToCurrency, for a pair enabled for the merchant of ctx.
func (s *Service) Rate(ctx context.Context, q RateQuery) (Indicative, error) {
	var f apperr.Fields
	ValidateRateQuery(q, &f)
	if err := f.Err(); err != nil {
		return Indicative{}, err
	}
	t, ok := tenant.From(ctx)
	if !ok {
		return Indicative{}, tenant.ErrNoTenant
	}
	c := s.db.Reader()
	row, p, side, err := findPair(ctx, c, money.Currency(*q.FromCurrency), money.Currency(*q.ToCurrency))
	if err != nil {
		return Indicative{}, store.Classify(err)
	}
	on, err := s.isEnabled(ctx, c, t.MerchantID, row)
	if err != nil {
		return Indicative{}, store.Classify(err)
	}
	if !on {
		return Indicative{}, notEnabled(p)
	}
	return s.indicative(row, p, side, s.clock.Now())
}

func (s *Service) indicative(row *ent.Pair, p pricing.Pair, side pricing.Side, now time.Time) (Indicative, error) {
	rate := pricing.Rate(s.src.Mid(p, row.Mid, now), row.Spread, side)
	fee, err := feeFor(row, p, side, Swap, rate)
	if err != nil {
		return Indicative{}, err
	}
	from, to := p.Fiat, p.Asset
	if side == pricing.Sell {
		from, to = p.Asset, p.Fiat
	}
	return Indicative{Pair: p, From: from, To: to, Side: side, Rate: rate, Fee: fee,
		RefreshIn: secondsUntil(now, WindowEnd(now, s.opt.IndicativeRefresh))}, nil
}

// secondsUntil is the whole seconds from now to t, rounded up, never negative.
func secondsUntil(now, t time.Time) int64 {
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
