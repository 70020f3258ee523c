package rates

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/quote"
	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
	"merchantpay/internal/pricing"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/validate"
)

// Which amount of a quote the merchant gave; refresh keeps it fixed.
const (
	fixedFrom = "from"
	fixedTo   = "to"
)

// Create prices and stores a quote for the merchant and mode of ctx. It runs
// in tx, the request's transaction handed to it, or, when tx is nil, in one
// of its own.
func (s *Service) Create(ctx context.Context, tx *ent.Tx, in CreateInput) (*ent.Quote, error) {
	var f apperr.Fields
	ValidateCreate(in, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	t, ok := tenant.From(ctx)
	if !ok {
		return nil, tenant.ErrNoTenant
	}
	from, to := money.Currency(*in.FromCurrency), money.Currency(*in.ToCurrency)
	tt, _ := txType(in.TransactionType)
	fixed, field, amt, cur := fixedFrom, "from_amount", in.FromAmount, from
	if in.ToAmount != nil {
		fixed, field, amt, cur = fixedTo, "to_amount", in.ToAmount, to
	}
	minor, err := money.ToMinor(*amt, cur)
	if err != nil {
		// ValidateCreate has checked the amount; this is unreachable.
		return nil, err
	}
	var out *ent.Quote
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		row, p, side, err := findPair(ctx, c, from, to)
		if err != nil {
			return err
		}
		on, err := s.isEnabled(ctx, c, t.MerchantID, row)
		if err != nil {
			return err
		}
		if !on {
			return notEnabled(p)
		}
		now := s.clock.Now()
		q, err := s.price(row, p, side, tt, fixed, field, minor, now)
		if err != nil {
			return err
		}
		out, err = c.Quote.Create().SetID(uuid.NewString()).SetPairID(row.ID).SetMarket(string(side)).
			SetFromCurrency(string(from)).SetToCurrency(string(to)).
			SetFromAmount(q.FromMinor).SetToAmount(q.ToMinor).SetFee(q.FeeMinor).
			SetFixedSide(fixed).SetRate(q.Rate).SetTransactionType(tt).
			SetNillableDepositMethod(in.DepositMethod).SetNillableWithdrawalMethod(in.WithdrawalMethod).
			SetExpiresAt(now.Add(s.opt.QuoteTTL)).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return out, nil
}

// price computes a quote at the current rate; field names the fixed amount
// for errors.
func (s *Service) price(row *ent.Pair, p pricing.Pair, side pricing.Side, tt, fixed, field string, minor int64, now time.Time) (pricing.Quote, error) {
	rate := pricing.Rate(s.src.Mid(p, row.Mid, now), row.Spread, side)
	fee, err := feeFor(row, p, side, tt, rate)
	if err != nil {
		return pricing.Quote{}, err
	}
	from, to := p.Fiat, p.Asset
	if side == pricing.Sell {
		from, to = p.Asset, p.Fiat
	}
	var q pricing.Quote
	if fixed == fixedFrom {
		q, err = pricing.QuoteFromAmount(from, to, side, rate, fee, minor)
	} else {
		q, err = pricing.QuoteToAmount(from, to, side, rate, fee, minor)
	}
	switch {
	case errors.Is(err, pricing.ErrAmountTooSmall):
		return q, apperr.New(apperr.AmountTooSmall,
			"the amount is too small: after the fee the quote would pay out nothing; send a larger amount")
	case errors.Is(err, pricing.ErrAmountTooLarge):
		return q, &apperr.Error{Kind: apperr.Validation, Message: "the amount is too large for this conversion",
			Fields: []apperr.FieldError{{Field: field, Message: "is too large for this conversion"}}}
	}
	return q, err
}

// Refresh re-prices a quote at the current rate with the same fixed amount,
// and gives it a new lifetime from now, in tx, the request's transaction
// handed to it (with tx nil, in one of its own). Expired quotes can be
// refreshed; used ones cannot (RATE_USED).
func (s *Service) Refresh(ctx context.Context, tx *ent.Tx, reference string) (*ent.Quote, error) {
	var f apperr.Fields
	if msg := validate.Text(reference); msg != "" {
		f.Add("reference", "%s", msg)
	} else if strings.TrimSpace(reference) == "" {
		f.Add("reference", "is required")
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	t, ok := tenant.From(ctx)
	if !ok {
		return nil, tenant.ErrNoTenant
	}
	var out *ent.Quote
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		q, err := c.Quote.Query().Where(quote.ID(reference)).Only(ctx)
		if ent.IsNotFound(err) {
			return notFound(reference, "reference")
		}
		if err != nil {
			return err
		}
		if q.Used {
			return used(reference)
		}
		row, err := c.Pair.Get(ctx, q.PairID)
		if ent.IsNotFound(err) {
			return apperr.New(apperr.PairNotSupported, "the pair %s is no longer supported", q.PairID)
		}
		if err != nil {
			return err
		}
		p := rowPair(row)
		on, err := s.isEnabled(ctx, c, t.MerchantID, row)
		if err != nil {
			return err
		}
		if !on {
			return notEnabled(p)
		}
		amount, field := q.FromAmount, "from_amount"
		if q.FixedSide == fixedTo {
			amount, field = q.ToAmount, "to_amount"
		}
		now := s.clock.Now()
		pq, err := s.price(row, p, pricing.Side(q.Market), q.TransactionType, q.FixedSide, field, amount, now)
		if err != nil {
			return err
		}
		expires := now.Add(s.opt.QuoteTTL)
		n, err := c.Quote.Update().Where(quote.ID(reference), quote.Used(false)).
			SetRate(pq.Rate).SetFromAmount(pq.FromMinor).SetToAmount(pq.ToMinor).SetFee(pq.FeeMinor).
			SetExpiresAt(expires).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return used(reference) // consumed since we read it
		}
		q.Rate, q.FromAmount, q.ToAmount, q.Fee = pq.Rate, pq.FromMinor, pq.ToMinor, pq.FeeMinor
		q.ExpiresAt, q.UpdatedAt = expires, now
		out = q
		return nil
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return out, nil
}

// QuotePair is the pair of a quote.
func QuotePair(q *ent.Quote) pricing.Pair {
	p, _ := pricing.ParsePair(q.PairID)
	return p
}

// RefreshIn is the whole seconds until q expires (0 once expired).
func (s *Service) RefreshIn(q *ent.Quote) int64 { return secondsUntil(s.clock.Now(), q.ExpiresAt) }

// SettlementMinutes is a swap quote's settlement time in minutes
// (SWAP_SETTLEMENT_DELAY; at most two decimals), nil for other types.
func (s *Service) SettlementMinutes(q *ent.Quote) *decimal.Decimal {
	if q.TransactionType != Swap {
		return nil
	}
	m := decimal.New(s.opt.SwapSettlementDelay.Milliseconds(), 0).DivRound(decimal.New(60_000, 0), 2)
	return &m
}
