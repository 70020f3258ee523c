package rest

import (
	"context"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/merchants"
	"merchantpay/internal/transactions"
	"merchantpay/present/txview"
)

func (o *Ops) getTransaction(ctx context.Context, r *Request) (Result, error) {
	get := o.Transactions.Get
	if r.Missed {
		get = o.Transactions.GetByMerchantReference
	}
	t, err := get(ctx, r.Tx, r.Param("reference"))
	if err != nil {
		return Result{}, err
	}
	return Result{Message: transactionRetrieved, Data: t}, nil
}

// getTransactionWithKey is getTransaction with the authentication in its
// look-up's statement.
func (o *Ops) getTransactionWithKey(ctx context.Context, key string, r *Request) (merchants.Principal, Result, bool, error) {
	p, t, found, err := o.Transactions.GetWithKey(ctx, o.Merchants, key, r.Param("reference"))
	if !found || err != nil {
		return p, Result{}, found, err
	}
	return p, Result{Message: transactionRetrieved, Data: t}, true, nil
}

const transactionRetrieved = "Transaction retrieved successfully"

func (o *Ops) listTransactions(ctx context.Context, r *Request) (Result, error) {
	var f apperr.Fields
	p := pageParams(r, transactions.CursorID, &f)
	q := r.Query
	// An empty filter (?type=&status=, the documented template left blank)
	// filters nothing, as an empty limit or cursor does.
	var filter transactions.Filter
	if v := q.Get("type"); v != "" {
		filter.Type = &v
	}
	if v := q.Get("status"); v != "" {
		filter.Status = &v
	}
	if v := q.Get("currency"); v != "" {
		filter.Currency = &v
	}
	if v := q.Get("search"); v != "" {
		filter.Search = &v
	}
	filter.CreatedFrom = queryTime(q.Get("created_from"), "created_from", &f)
	filter.CreatedTo = queryTime(q.Get("created_to"), "created_to", &f)
	filter.Validate(transactions.FilterFields{Type: "type", Status: "status", Currency: "currency",
		CreatedFrom: "created_from", CreatedTo: "created_to", Search: "search"}, &f)
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	rows, info, err := o.Transactions.List(ctx, filter, p)
	if err != nil {
		return Result{}, err
	}
	out := make([]txview.Transaction, len(rows))
	for i, t := range rows {
		out[i] = txview.View(t)
	}
	return Result{Message: "Transactions retrieved successfully", Data: out, Meta: &Meta{HasMore: info.HasMore, NextCursor: info.NextCursor}}, nil
}

// queryTime reads an RFC 3339 time from a query parameter; empty is nil.
func queryTime(v, field string, f *apperr.Fields) *time.Time {
	if v == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		f.Add(field, "must be an RFC 3339 time, such as 2026-11-21T00:00:00Z")
		return nil
	}
	t = t.UTC()
	return &t
}
