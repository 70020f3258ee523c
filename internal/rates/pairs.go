package rates

import (
	"context"
	"fmt"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/merchant"
	"merchantpay/ent/merchantpair"
	"merchantpay/ent/pair"
	"merchantpay/ent/schematype"
	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
	"merchantpay/internal/pricing"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// SeedResult names the pairs Seed inserted and re-applied.
type SeedResult struct {
	Inserted []string
	Updated  []string
}

// Seed applies the configuration file at start-up: pairs missing from the
// database are inserted, and pairs whose file entry changed since it was last
// applied are overwritten; everything else, CLI changes included, stays.
// Several instances may seed at once.
func (s *Service) Seed(ctx context.Context, pairs []PairConfig) (SeedResult, error) {
	var res SeedResult
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		res = SeedResult{}
		c := tx.Client()
		rows, err := c.Pair.Query().All(ctx)
		if err != nil {
			return err
		}
		have := make(map[string]*ent.Pair, len(rows))
		for _, r := range rows {
			have[r.ID] = r
		}
		now := s.clock.Now()
		for _, p := range pairs {
			id, h := p.Pair.String(), p.Hash()
			old, ok := have[id]
			switch {
			case !ok:
				err = c.Pair.Create().SetID(id).SetAsset(string(p.Pair.Asset)).SetFiat(string(p.Pair.Fiat)).
					SetMid(p.Mid).SetSpread(p.Spread).SetFees(feeRules(p.Fees)).
					SetDefaultEnabled(p.DefaultEnabled).SetConfigHash(h).SetUpdatedAt(now).
					OnConflictColumns(pair.FieldID).DoNothing().Exec(ctx)
				res.Inserted = append(res.Inserted, id)
			case old.ConfigHash != h:
				err = c.Pair.UpdateOneID(id).SetMid(p.Mid).SetSpread(p.Spread).SetFees(feeRules(p.Fees)).
					SetDefaultEnabled(p.DefaultEnabled).SetConfigHash(h).SetUpdatedAt(now).Exec(ctx)
				res.Updated = append(res.Updated, id)
			}
			if err != nil {
				return fmt.Errorf("rates: seed %s: %w", id, err)
			}
		}
		return nil
	})
	return res, store.Classify(err)
}

func feeRules(fees map[string]pricing.FeeSpec) map[string]schematype.FeeRule {
	out := make(map[string]schematype.FeeRule, len(fees))
	for t, f := range fees {
		out[t] = schematype.FeeRule{Type: string(f.Type), Value: f.Value}
	}
	return out
}

// ListPairs returns every configured pair, by id.
func (s *Service) ListPairs(ctx context.Context) ([]*ent.Pair, error) {
	rows, err := s.db.Reader().Pair.Query().Order(ent.Asc(pair.FieldID)).All(ctx)
	return rows, store.Classify(err)
}

// MarketMid is the mid the price source gives pair row now.
func (s *Service) MarketMid(row *ent.Pair) decimal.Decimal {
	return s.src.Mid(pricing.Pair{Asset: money.Currency(row.Asset), Fiat: money.Currency(row.Fiat)}, row.Mid, s.clock.Now())
}

// SetMid sets a pair's configured mid price (the sandbox market moves
// around it). The change survives restarts until the pair's entry in the
// pairs file is edited.
func (s *Service) SetMid(ctx context.Context, pairID string, mid decimal.Decimal) (*ent.Pair, error) {
	var f apperr.Fields
	if _, err := pricing.ParsePair(pairID); err != nil {
		f.Add("pair", "must be a supported ASSET/FIAT pair such as USDT/NGN")
	}
	if mid.Sign() <= 0 {
		f.Add("mid", "must be a number above 0")
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	var out *ent.Pair
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		out, err = tx.Client().Pair.UpdateOneID(pairID).SetMid(mid).SetUpdatedAt(s.clock.Now()).Save(ctx)
		if ent.IsNotFound(err) {
			return apperr.New(apperr.PairNotSupported, "the pair %s is not configured", pairID)
		}
		return err
	})
	return out, store.Classify(err)
}

// MerchantPairState is a merchant's setting for one pair.
type MerchantPairState struct {
	MerchantID string `json:"merchant_id"`
	Pair       string `json:"pair"`
	Enabled    bool   `json:"enabled"`
}

// SetEnabled enables or disables a pair for a merchant (both modes),
// overriding the pair's default_enabled.
func (s *Service) SetEnabled(ctx context.Context, merchantID, pairID string, enabled bool) (MerchantPairState, error) {
	var f apperr.Fields
	if merchantID == "" {
		f.Add("merchant", "is required")
	}
	if _, err := pricing.ParsePair(pairID); err != nil {
		f.Add("pair", "must be a supported ASSET/FIAT pair such as USDT/NGN")
	}
	if err := f.Err(); err != nil {
		return MerchantPairState{}, err
	}
	ctx = tenant.System(ctx)
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		if ok, err := c.Merchant.Query().Where(merchant.ID(merchantID)).Exist(ctx); err != nil {
			return err
		} else if !ok {
			return apperr.New(apperr.NotFound, "no merchant %q", merchantID)
		}
		if ok, err := c.Pair.Query().Where(pair.ID(pairID)).Exist(ctx); err != nil {
			return err
		} else if !ok {
			return apperr.New(apperr.PairNotSupported, "the pair %s is not configured", pairID)
		}
		return c.MerchantPair.Create().SetMerchantID(merchantID).SetPairID(pairID).SetEnabled(enabled).
			SetUpdatedAt(s.clock.Now()).
			OnConflictColumns(merchantpair.FieldMerchantID, merchantpair.FieldPairID).UpdateNewValues().Exec(ctx)
	})
	if err != nil {
		return MerchantPairState{}, store.Classify(err)
	}
	return MerchantPairState{MerchantID: merchantID, Pair: pairID, Enabled: enabled}, nil
}

// enabledPairs returns the pairs enabled for the merchant of ctx, by id.
func (s *Service) enabledPairs(ctx context.Context, c *ent.Client, merchantID string) ([]*ent.Pair, error) {
	rows, err := c.Pair.Query().Order(ent.Asc(pair.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	over, err := c.MerchantPair.Query().Where(merchantpair.MerchantID(merchantID)).All(ctx)
	if err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(over))
	for _, o := range over {
		set[o.PairID] = o.Enabled
	}
	out := rows[:0]
	for _, r := range rows {
		if on, ok := set[r.ID]; (ok && on) || (!ok && r.DefaultEnabled) {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *Service) isEnabled(ctx context.Context, c *ent.Client, merchantID string, row *ent.Pair) (bool, error) {
	o, err := c.MerchantPair.Query().Where(merchantpair.MerchantID(merchantID), merchantpair.PairID(row.ID)).Only(ctx)
	if ent.IsNotFound(err) {
		return row.DefaultEnabled, nil
	}
	if err != nil {
		return false, err
	}
	return o.Enabled, nil
}

// findPair finds the configured pair converting from → to, and the side.
func findPair(ctx context.Context, c *ent.Client, from, to money.Currency) (*ent.Pair, pricing.Pair, pricing.Side, error) {
	rows, err := c.Pair.Query().Where(pair.IDIn(string(from)+"/"+string(to), string(to)+"/"+string(from))).All(ctx)
	if err != nil {
		return nil, pricing.Pair{}, "", err
	}
	for _, r := range rows {
		p := rowPair(r)
		if side, err := pricing.SideFor(p, from, to); err == nil {
			return r, p, side, nil
		}
	}
	return nil, pricing.Pair{}, "", apperr.New(apperr.PairNotSupported, "converting %s to %s is not supported", from, to)
}

func rowPair(r *ent.Pair) pricing.Pair {
	return pricing.Pair{Asset: money.Currency(r.Asset), Fiat: money.Currency(r.Fiat)}
}

func notEnabled(p pricing.Pair) error {
	return apperr.New(apperr.PairNotEnabled, "the pair %s is not enabled for this merchant", p)
}

// feeFor is the fee rule of txType on pair row for side, in to-currency
// terms. Flat fees are configured in the fiat currency; a BUY pays out the
// asset, so its flat fee is that fiat amount at the quote's rate, rounded up
// to the asset's minor unit (in the service's favour).
func feeFor(row *ent.Pair, p pricing.Pair, side pricing.Side, txType string, rate decimal.Decimal) (pricing.FeeSpec, error) {
	rule, ok := row.Fees[txType]
	if !ok {
		return pricing.FeeSpec{}, fmt.Errorf("rates: pair %s has no %s fee", row.ID, txType)
	}
	fs := pricing.FeeSpec{Type: pricing.FeeType(rule.Type), Value: rule.Value}
	if err := fs.Validate(); err != nil {
		return pricing.FeeSpec{}, fmt.Errorf("rates: pair %s %s fee: %w", row.ID, txType, err)
	}
	if fs.Type == pricing.Flat && side == pricing.Buy && fs.Value.Sign() > 0 {
		m, err := money.RoundQuo(fs.Value, rate, p.Asset, money.Up)
		if err != nil {
			return pricing.FeeSpec{}, fmt.Errorf("rates: pair %s %s fee: %w", row.ID, txType, err)
		}
		fs.Value = money.FromMinor(m, p.Asset)
	}
	return fs, nil
}
