package transactions

import (
	"context"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/money"
	"merchantpay/internal/store"
)

// Volume is a day's money in and out of one currency, in minor units.
type Volume struct {
	Currency money.Currency
	// Incoming: deposits' amounts, and what swaps bought.
	Incoming int64
	// Outgoing: withdrawals' from_amounts (what left the balance), and
	// what swaps sold.
	Outgoing int64
	// Count is the transactions that moved this currency.
	Count int
}

// VolumeOn is the ctx tenant's volume on the UTC day of day: pending and
// successful transactions created that day (failed and refunded ones moved
// nothing), one entry per supported currency in money.All's order.
func (s *Service) VolumeOn(ctx context.Context, day time.Time) ([]Volume, error) {
	start := day.UTC().Truncate(24 * time.Hour)
	var groups []struct {
		Type         string  `json:"type"`
		Currency     string  `json:"currency"`
		FromCurrency string  `json:"from_currency"`
		ToCurrency   *string `json:"to_currency"`
		Amount       int64   `json:"amount"`
		FromAmount   int64   `json:"from_amount"`
		ToAmount     *int64  `json:"to_amount"`
		Count        int     `json:"count"`
	}
	err := s.db.Reader().Transaction.Query().
		Where(transaction.CreatedAtGTE(start), transaction.CreatedAtLT(start.Add(24*time.Hour)),
			transaction.StatusIn("pending", "success")).
		GroupBy(transaction.FieldType, transaction.FieldCurrency, transaction.FieldFromCurrency, transaction.FieldToCurrency).
		Aggregate(ent.As(ent.Sum(transaction.FieldAmount), "amount"),
			ent.As(ent.Sum(transaction.FieldFromAmount), "from_amount"),
			ent.As(ent.Sum(transaction.FieldToAmount), "to_amount"),
			ent.As(ent.Count(), "count")).
		Scan(ctx, &groups)
	if err != nil {
		return nil, store.Classify(err)
	}
	by := map[money.Currency]*Volume{}
	out := make([]Volume, len(money.All()))
	for i, c := range money.All() {
		out[i] = Volume{Currency: c}
		by[c] = &out[i]
	}
	add := func(code string, in, outgoing int64, n int) {
		if v, ok := by[money.Currency(code)]; ok {
			v.Incoming += in
			v.Outgoing += outgoing
			v.Count += n
		}
	}
	for _, g := range groups {
		switch g.Type {
		case "DEPOSIT":
			add(g.Currency, g.Amount, 0, g.Count)
		case "WITHDRAWAL":
			add(g.FromCurrency, 0, g.FromAmount, g.Count)
		case "SWAP":
			add(g.FromCurrency, 0, g.FromAmount, g.Count)
			if g.ToCurrency != nil && g.ToAmount != nil {
				add(*g.ToCurrency, *g.ToAmount, 0, g.Count)
			}
		}
	}
	return out, nil
}
