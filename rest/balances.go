package rest

import (
	"context"
	"slices"
	"strconv"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/page"
)

// balanceJSON is one entry of GET /balances (extension): amounts in major
// units as exact JSON numbers, updated_at null while never changed.
type balanceJSON struct {
	Currency  string  `json:"currency"`
	Available Num     `json:"available"`
	Pending   Num     `json:"pending"`
	UpdatedAt *string `json:"updated_at"`
}

func balanceView(b ledger.Balance) balanceJSON {
	return balanceJSON{
		Currency:  string(b.Currency),
		Available: Num(money.FromMinor(b.Available, b.Currency)),
		Pending:   Num(money.FromMinor(b.Pending, b.Currency)),
		UpdatedAt: TimePtr(b.UpdatedAt),
	}
}

// listBalances is GET /balances: one entry per currency, in a fixed order,
// paged like every REST list (limit at most 100, then cursor; the default page
// holds them all).
func (o *Ops) listBalances(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	p := pageParams(r, page.Code, &f)
	bs, err := o.Ledger.Balances(ctx)
	if err != nil {
		return Result{}, err
	}
	if p.After != nil {
		// A balances cursor names the last currency of the page before.
		if i := slices.IndexFunc(bs, func(b ledger.Balance) bool { return string(b.Currency) == p.After.ID }); i < 0 {
			f.Add("cursor", "is not a cursor this service issued")
		} else {
			bs = bs[i+1:]
		}
	}
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	bs, info := page.Cut(bs, p.Limit, func(b ledger.Balance) page.Cursor {
		return page.Cursor{Time: time.UnixMilli(0), ID: string(b.Currency)}
	})
	out := make([]balanceJSON, len(bs))
	for i, b := range bs {
		out[i] = balanceView(b)
	}
	return Result{Message: "Balances retrieved successfully", Data: out, Meta: &Meta{HasMore: info.HasMore, NextCursor: info.NextCursor}}, nil
}

// fundBalance is POST /sandbox/balances/fund {currency, amount}.
func (o *Ops) fundBalance(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	body, err := parseBody(r.Body, &f)
	if err != nil {
		return Result{}, err
	}
	currency := body.str("currency", false)
	amount := body.number("amount", false)
	if f.Len() > 0 {
		return Result{}, mergeValidation(&f, func(g *apperr.Fields) { ledger.ValidateFund(currency, amount, g) })
	}
	ledger.ValidateFund(currency, amount, &f)
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	b, err := o.Ledger.Fund(ctx, r.Tx, *currency, *amount)
	if err != nil {
		return Result{}, err
	}
	return Result{Message: "Balance funded successfully", Data: balanceView(b)}, nil
}

// balanceEntryJSON is one entry of GET /balances/{currency}/history
// (extension): signed amounts in major units as exact JSON numbers.
type balanceEntryJSON struct {
	ID                   string  `json:"id"`
	CreatedAt            string  `json:"created_at"`
	Amount               Num     `json:"amount"`
	BalanceAfter         Num     `json:"balance_after"`
	Currency             string  `json:"currency"`
	TransactionReference *string `json:"transaction_reference"`
	Description          string  `json:"description"`
}

// balanceHistory is GET /balances/{currency}/history: the ledger entries of
// the available balance in one currency, newest first, each with the
// balance after it, paged like every REST list.
func (o *Ops) balanceHistory(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	c := ledger.ParseCurrency(r.Param("currency"), "currency", &f)
	p := pageParams(r, ledger.HistoryCursorID, &f)
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	rows, info, err := o.Ledger.History(ctx, c, p, "cursor")
	if err != nil {
		return Result{}, err
	}
	out := make([]balanceEntryJSON, len(rows))
	for i, e := range rows {
		out[i] = balanceEntryJSON{ID: strconv.FormatInt(e.ID, 10), CreatedAt: Time(e.CreatedAt),
			Amount: Num(money.FromMinor(e.Amount, e.Currency)), BalanceAfter: Num(money.FromMinor(e.BalanceAfter, e.Currency)),
			Currency: string(e.Currency), Description: e.Memo}
		if e.TransactionRef != "" {
			ref := e.TransactionRef
			out[i].TransactionReference = &ref
		}
	}
	return Result{Message: "Balance history retrieved successfully", Data: out,
		Meta: &Meta{HasMore: info.HasMore, NextCursor: info.NextCursor}}, nil
}
