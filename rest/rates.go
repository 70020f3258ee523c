package rest

import (
	"context"
	"strings"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
	"merchantpay/internal/rates"
)

// indicativeRateJSON is the spec's "Indicative rate".
type indicativeRateJSON struct {
	Fiat         string `json:"fiat"`
	Asset        string `json:"asset"`
	FromCurrency string `json:"from_currency"`
	ToCurrency   string `json:"to_currency"`
	Fee          Num    `json:"fee"`
	FeeType      string `json:"fee_type"`
	RefreshIn    int64  `json:"refresh_in"`
	Rate         Num    `json:"rate"`
	Market       string `json:"market"`
}

// pairRatesJSON is one element of the list form of GET /markets/rates.
type pairRatesJSON struct {
	Pair string             `json:"pair"`
	Buy  indicativeRateJSON `json:"buy"`
	Sell indicativeRateJSON `json:"sell"`
}

// quoteJSON is the spec's "Created rate".
type quoteJSON struct {
	FromCurrency     string  `json:"from_currency"`
	ToCurrency       string  `json:"to_currency"`
	FromAmount       Num     `json:"from_amount"`
	ToAmount         Num     `json:"to_amount"`
	Reference        string  `json:"reference"`
	ExpiresAt        string  `json:"expires_at"`
	SettlementTime   *Num    `json:"settlement_time"`
	Fee              Num     `json:"fee"`
	FeeType          string  `json:"fee_type"`
	Rate             Num     `json:"rate"`
	TransactionType  string  `json:"transaction_type"`
	DepositMethod    *string `json:"deposit_method"`
	WithdrawalMethod *string `json:"withdrawal_method"`
	CreatedAt        string  `json:"created_at"`
	UpdatedAt        string  `json:"updated_at"`
	Fiat             string  `json:"fiat"`
	Asset            string  `json:"asset"`
	RefreshIn        int64   `json:"refresh_in"`
	Used             bool    `json:"used"`
}

func indicativeRateView(r rates.Indicative) indicativeRateJSON {
	return indicativeRateJSON{
		Fiat: string(r.Pair.Fiat), Asset: string(r.Pair.Asset),
		FromCurrency: string(r.From), ToCurrency: string(r.To),
		Fee: Num(r.Fee.Value), FeeType: string(r.Fee.Type),
		RefreshIn: r.RefreshIn, Rate: Num(r.Rate), Market: string(r.Side),
	}
}

// quoteView renders a quote; other handlers (swaps) may reuse it.
func (o *Ops) quoteView(q *ent.Quote) quoteJSON {
	p := rates.QuotePair(q)
	from, to := money.Currency(q.FromCurrency), money.Currency(q.ToCurrency)
	return quoteJSON{
		FromCurrency: q.FromCurrency, ToCurrency: q.ToCurrency,
		FromAmount: Num(money.FromMinor(q.FromAmount, from)), ToAmount: Num(money.FromMinor(q.ToAmount, to)),
		Reference: q.ID, ExpiresAt: Time(q.ExpiresAt),
		SettlementTime: NumPtr(o.Rates.SettlementMinutes(q)),
		Fee:            Num(money.FromMinor(q.Fee, to)), FeeType: "FLAT", Rate: Num(q.Rate),
		TransactionType: strings.ToUpper(q.TransactionType),
		DepositMethod:   q.DepositMethod, WithdrawalMethod: q.WithdrawalMethod,
		CreatedAt: Time(q.CreatedAt), UpdatedAt: Time(q.UpdatedAt),
		Fiat: string(p.Fiat), Asset: string(p.Asset),
		RefreshIn: o.Rates.RefreshIn(q), Used: q.Used,
	}
}

// getRates is GET /markets/rates: every enabled pair without query
// parameters, one conversion with from_currency and to_currency.
func (o *Ops) getRates(ctx context.Context, r *Request) (Result, error) {
	query := r.Query
	if !query.Has("from_currency") && !query.Has("to_currency") {
		list, err := o.Rates.Rates(ctx)
		if err != nil {
			return Result{}, err
		}
		out := make([]pairRatesJSON, len(list))
		for i, pr := range list {
			out[i] = pairRatesJSON{Pair: pr.Pair.String(), Buy: indicativeRateView(pr.Buy), Sell: indicativeRateView(pr.Sell)}
		}
		return Result{Message: "Rates retrieved successfully", Data: out}, nil
	}
	param := func(name string) *string {
		if !query.Has(name) {
			return nil
		}
		v := query.Get(name)
		return &v
	}
	q := rates.RateQuery{FromCurrency: param("from_currency"), ToCurrency: param("to_currency")}
	var f apperr.Fields
	rates.ValidateRateQuery(q, &f)
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	ind, err := o.Rates.Rate(ctx, q)
	if err != nil {
		return Result{}, err
	}
	return Result{Message: "Rate retrieved successfully", Data: indicativeRateView(ind)}, nil
}

// createRate is POST /rates/create.
func (o *Ops) createRate(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	body, err := parseBody(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	amount := func(field string) *decimal.Decimal {
		if d := body.number(field, false); d != nil {
			return d
		}
		if body.present(field) {
			// Sent but not a number (already reported): it still counts as
			// given for "exactly one of from_amount and to_amount".
			z := decimal.Zero
			return &z
		}
		return nil
	}
	in := rates.CreateInput{
		FromCurrency:     body.str("from_currency", false),
		ToCurrency:       body.str("to_currency", false),
		FromAmount:       amount("from_amount"),
		ToAmount:         amount("to_amount"),
		TransactionType:  body.str("transaction_type", false),
		DepositMethod:    body.str("deposit_method", false),
		WithdrawalMethod: body.str("withdrawal_method", false),
	}
	if f.Len() > 0 {
		return Result{}, mergeValidation(&f, func(g *apperr.Fields) { rates.ValidateCreate(in, g) })
	}
	q, err := o.Rates.Create(ctx, r.Tx, in)
	if err != nil {
		return Result{}, err
	}
	return Result{Message: "Rate created successfully", Data: o.quoteView(q)}, nil
}

// refreshRate is POST /rates/refresh.
func (o *Ops) refreshRate(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	body, err := parseBody(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	ref := body.str("reference", true)
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	q, err := o.Rates.Refresh(ctx, r.Tx, *ref)
	if err != nil {
		return Result{}, err
	}
	return Result{Message: "Rate refreshed successfully", Data: o.quoteView(q)}, nil
}
