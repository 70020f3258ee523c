// Package rates holds the operator's currency pairs, the indicative rates and
// the quotes of CONTRACT 5: creating, refreshing and consuming them. The
// arithmetic is internal/pricing's; this package adds the configuration (in
// the database, shared by every instance), the price source, the clock and
// the one atomic consumption that swaps, withdrawals and deposits call.
//
// Configuration file versus CLI: at start-up each entry of the pairs file
// (PAIRS_CONFIG, or the embedded default) is inserted when its pair is not in
// the database, and applied again (mid, spread, fees, default_enabled) only
// when the entry itself changed since it was last applied; the database keeps
// the hash of the entry it applied. Changes made with the CLI (set-mid,
// enable, disable) live only in the database, so they survive restarts until
// the operator edits that pair's entry in the file: the later change wins.
// Pairs removed from the file stay in the database.
package rates

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/merchant"
	"merchantpay/ent/merchantpair"
	"merchantpay/ent/pair"
	"merchantpay/ent/quote"
	"merchantpay/ent/schematype"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
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

// Options are the rate timings (CONTRACT 11).
type Options struct {
	// QuoteTTL is a quote's lifetime (QUOTE_TTL).
	QuoteTTL time.Duration
	// IndicativeRefresh is the indicative rates' period (INDICATIVE_REFRESH).
	IndicativeRefresh time.Duration
	// SwapSettlementDelay is shown on swap quotes (SWAP_SETTLEMENT_DELAY).
	SwapSettlementDelay time.Duration
}

// Service runs the rate operations.
type Service struct {
	db    *store.DB
	clock clock.Clock
	src   PriceSource
	opt   Options
}

// New returns the rates service.
func New(db *store.DB, c clock.Clock, src PriceSource, opt Options) *Service {
	if opt.QuoteTTL <= 0 {
		opt.QuoteTTL = 90 * time.Second
	}
	if opt.IndicativeRefresh <= 0 {
		opt.IndicativeRefresh = 20 * time.Second
	}
	return &Service{db: db, clock: c, src: src, opt: opt}
}

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
	err := s.db.Tx(ctx, func(ctx context.Context) error {
		res = SeedResult{}
		c := s.db.Client(ctx)
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

// ---- Operator commands (CLI) ----

// ListPairs returns every configured pair, by id.
func (s *Service) ListPairs(ctx context.Context) ([]*ent.Pair, error) {
	rows, err := s.db.Client(ctx).Pair.Query().Order(ent.Asc(pair.FieldID)).All(ctx)
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
	err := s.db.Tx(ctx, func(ctx context.Context) error {
		var err error
		out, err = s.db.Client(ctx).Pair.UpdateOneID(pairID).SetMid(mid).SetUpdatedAt(s.clock.Now()).Save(ctx)
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
	err := s.db.Tx(ctx, func(ctx context.Context) error {
		c := s.db.Client(ctx)
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

// ---- Indicative rates ----

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
	rows, err := s.enabledPairs(ctx, s.db.Client(ctx), t.MerchantID)
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

// RateQuery asks for the indicative rate of one conversion. Nil means the
// query parameter was absent.
type RateQuery struct {
	FromCurrency, ToCurrency *string
}

// ValidateRateQuery collects every bad query parameter.
func ValidateRateQuery(q RateQuery, f *apperr.Fields) {
	from := currencyField(f, "from_currency", q.FromCurrency, true)
	to := currencyField(f, "to_currency", q.ToCurrency, true)
	if from != "" && from == to {
		f.Add("to_currency", "must differ from from_currency")
	}
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
	c := s.db.Client(ctx)
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

// secondsUntil is the whole seconds from now to t, rounded up, never negative.
func secondsUntil(now, t time.Time) int64 {
	d := t.Sub(now)
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// ---- Quotes ----

// CreateInput is a quote request, shared by REST and GraphQL. Nil means the
// field was absent (or of the wrong type, already reported by the decoder).
type CreateInput struct {
	FromCurrency     *string
	ToCurrency       *string
	FromAmount       *decimal.Decimal
	ToAmount         *decimal.Decimal
	TransactionType  *string
	DepositMethod    *string
	WithdrawalMethod *string
}

// validMethod accepts a method name: 1 to 64 letters, digits, - or _.
func validMethod(m string) bool {
	if m == "" || len(m) > 64 {
		return false
	}
	for _, r := range m {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// ValidateCreate collects every bad field of in. Field names are the REST
// body's.
func ValidateCreate(in CreateInput, f *apperr.Fields) {
	from := currencyField(f, "from_currency", in.FromCurrency, true)
	to := currencyField(f, "to_currency", in.ToCurrency, true)
	if from != "" && from == to {
		f.Add("to_currency", "must differ from from_currency")
	}
	amount := func(field string, d decimal.Decimal, c money.Currency) {
		if c == "" {
			if d.Sign() <= 0 {
				f.Add(field, "must be greater than 0")
			}
			return
		}
		if msg := money.ValidateAmount(d, c); msg != "" {
			f.Add(field, "%s", msg)
		}
	}
	switch {
	case in.FromAmount != nil && in.ToAmount != nil:
		f.Add("from_amount", "give only one of from_amount and to_amount")
		f.Add("to_amount", "give only one of from_amount and to_amount")
	case in.FromAmount == nil && in.ToAmount == nil:
		f.Add("from_amount", "one of from_amount and to_amount is required")
		f.Add("to_amount", "one of from_amount and to_amount is required")
	case in.FromAmount != nil:
		amount("from_amount", *in.FromAmount, from)
	default:
		amount("to_amount", *in.ToAmount, to)
	}
	tt, ok := txType(in.TransactionType)
	if !ok {
		f.Add("transaction_type", "must be swap, deposit or withdrawal")
	}
	if in.DepositMethod != nil {
		switch {
		case *in.DepositMethod != DepositMethodCryptoPay:
			f.Add("deposit_method", "must be crypto-pay")
		case ok && tt != Deposit:
			f.Add("deposit_method", "is only valid with transaction_type deposit")
		}
	}
	if in.WithdrawalMethod != nil {
		switch {
		case !validMethod(*in.WithdrawalMethod):
			f.Add("withdrawal_method", "must be 1 to 64 letters, digits, - or _")
		case ok && tt != Withdrawal:
			f.Add("withdrawal_method", "is only valid with transaction_type withdrawal")
		}
	}
}

// txType reads a transaction_type (any case); absent means swap.
func txType(v *string) (string, bool) {
	if v == nil {
		return Swap, true
	}
	t := strings.ToLower(*v)
	return t, validTxType(t)
}

// currencyField checks a currency code field and returns it, or "" when bad.
func currencyField(f *apperr.Fields, field string, v *string, required bool) money.Currency {
	if v == nil {
		if required {
			f.Add(field, "is required")
		}
		return ""
	}
	c, ok := money.Parse(*v)
	if !ok {
		f.Add(field, "must be a supported currency code (%s)", strings.Join(currencyCodes(), ", "))
		return ""
	}
	return c
}

func currencyCodes() []string {
	all := money.All()
	out := make([]string, len(all))
	for i, c := range all {
		out[i] = string(c)
	}
	return out
}

// Create prices and stores a quote for the merchant and mode of ctx. It runs
// in the transaction carried by ctx, or its own.
func (s *Service) Create(ctx context.Context, in CreateInput) (*ent.Quote, error) {
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
	err = s.db.Tx(ctx, func(ctx context.Context) error {
		c := s.db.Client(ctx)
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
// and gives it a new lifetime from now. Expired quotes can be refreshed;
// used ones cannot (RATE_USED).
func (s *Service) Refresh(ctx context.Context, reference string) (*ent.Quote, error) {
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
	err := s.db.Tx(ctx, func(ctx context.Context) error {
		c := s.db.Client(ctx)
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

// CheckBeside adds to f an amount or currency a request sent beside the
// quote q (a cross withdrawal or deposit) that is not the quote's to_amount
// or to_currency: the quote fixes what is paid, and anything else would be
// silently ignored. Absent (nil) values are fine.
func CheckBeside(q *ent.Quote, amount *decimal.Decimal, currency *string, f *apperr.Fields) {
	if currency != nil && *currency != q.ToCurrency {
		f.Add("currency", "must be the quote's to_currency (%s) or absent", q.ToCurrency)
	}
	if to := money.FromMinor(q.ToAmount, money.Currency(q.ToCurrency)); amount != nil && !amount.Equal(to) {
		f.Add("amount", "must be the quote's to_amount (%s) or absent", to)
	}
}

// Consume marks the quote reference used, exactly once, for a transaction of
// transactionType (swap, deposit or withdrawal, any case); usedBy records the
// consuming transaction's reference. It is one conditional UPDATE (used is
// false, not expired, the type matches), so concurrent callers cannot both
// win. Call it inside the consuming operation's transaction (it joins the one
// in ctx): if that transaction rolls back, the quote stays unused.
//
// Errors: NOT_FOUND (field rate_reference) for an unknown quote or one of
// another merchant or mode; RATE_TYPE_MISMATCH for another transaction type;
// RATE_USED when already consumed; RATE_EXPIRED when expires_at has passed
// (the message says to refresh it).
func (s *Service) Consume(ctx context.Context, reference, transactionType, usedBy string) (*ent.Quote, error) {
	if validate.Text(reference) != "" {
		return nil, notFound(reference, "rate_reference") // no quote has such a reference
	}
	tt := strings.ToLower(transactionType)
	var out *ent.Quote
	err := s.db.Tx(ctx, func(ctx context.Context) error {
		c := s.db.Client(ctx)
		now := s.clock.Now()
		upd := c.Quote.Update().
			Where(quote.ID(reference), quote.Used(false), quote.ExpiresAtGT(now), quote.TransactionType(tt)).
			SetUsed(true).SetUpdatedAt(now)
		if usedBy != "" {
			upd.SetUsedBy(usedBy)
		}
		n, err := upd.Save(ctx)
		if err != nil {
			return err
		}
		q, err := c.Quote.Query().Where(quote.ID(reference)).Only(ctx)
		if ent.IsNotFound(err) {
			return notFound(reference, "rate_reference")
		}
		if err != nil {
			return err
		}
		if n == 1 {
			out = q
			return nil
		}
		switch {
		case q.TransactionType != tt:
			return apperr.New(apperr.RateTypeMismatch, "the rate %s was created for a %s, not a %s",
				reference, strings.ToUpper(q.TransactionType), strings.ToUpper(tt))
		case q.Used:
			return used(reference)
		case !q.ExpiresAt.After(now):
			return apperr.New(apperr.RateExpired,
				"the rate %s expired at %s; refresh it with POST /rates/refresh and try again",
				reference, q.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z"))
		}
		return fmt.Errorf("rates: consume %s: no row updated for a usable quote", reference)
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return out, nil
}

func notFound(ref, field string) error {
	return &apperr.Error{Kind: apperr.NotFound, Message: fmt.Sprintf("no rate with reference %q", ref),
		Fields: []apperr.FieldError{{Field: field, Message: "no rate with this reference"}}}
}

func used(ref string) error {
	return apperr.New(apperr.RateUsed, "the rate %s has already been used; create a new one", ref)
}

// ---- Views for the transports ----

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
