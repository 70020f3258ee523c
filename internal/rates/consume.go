package rates

import (
	"context"
	"fmt"
	"strings"

	"merchantpay/ent"
	"merchantpay/ent/quote"
	"merchantpay/internal/apperr"
	"merchantpay/internal/store"
	"merchantpay/internal/validate"
)

// Consume marks the quote reference used, exactly once, for a transaction of
// transactionType (swap, deposit or withdrawal, any case); usedBy records the
// consuming transaction's reference. It is one conditional UPDATE (used is
// false, not expired, the type matches), so concurrent callers cannot both
// win. It runs in tx, the consuming operation's transaction handed to it as
// an argument (a swap's, a withdrawal's): if that transaction rolls back, the
// quote stays unused.
//
// Errors: NOT_FOUND (field rate_reference) for an unknown quote or one of
// another merchant or mode; RATE_TYPE_MISMATCH for another transaction type;
// RATE_USED when already consumed; RATE_EXPIRED when expires_at has passed
// (the message says to refresh it).
func (s *Service) Consume(ctx context.Context, tx *ent.Tx, reference, transactionType, usedBy string) (*ent.Quote, error) {
	if validate.Text(reference) != "" {
		return nil, notFound(reference, "rate_reference") // no quote has such a reference
	}
	out, err := s.consume(ctx, tx.Client(), reference, transactionType, usedBy)
	if err != nil {
		return nil, store.Classify(err)
	}
	return out, nil
}

// consume is Consume's UPDATE and, when it changed nothing, the reading
// that says why, through c, the client of the caller's transaction.
func (s *Service) consume(ctx context.Context, c *ent.Client, reference, transactionType, usedBy string) (*ent.Quote, error) {
	tt := strings.ToLower(transactionType)
	now := s.clock.Now()
	upd := c.Quote.Update().
		Where(quote.ID(reference), quote.Used(false), quote.ExpiresAtGT(now), quote.TransactionType(tt)).
		SetUsed(true).SetUpdatedAt(now)
	if usedBy != "" {
		upd.SetUsedBy(usedBy)
	}
	n, err := upd.Save(ctx)
	if err != nil {
		return nil, err
	}
	q, err := c.Quote.Query().Where(quote.ID(reference)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, notFound(reference, "rate_reference")
	}
	if err != nil {
		return nil, err
	}
	if n == 1 {
		return q, nil
	}
	switch {
	case q.TransactionType != tt:
		return nil, apperr.New(apperr.RateTypeMismatch, "the rate %s was created for a %s, not a %s",
			reference, strings.ToUpper(q.TransactionType), strings.ToUpper(tt))
	case q.Used:
		return nil, used(reference)
	case !q.ExpiresAt.After(now):
		return nil, apperr.New(apperr.RateExpired,
			"the rate %s expired at %s; refresh it with POST /rates/refresh and try again",
			reference, q.ExpiresAt.UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	return nil, fmt.Errorf("rates: consume %s: no row updated for a usable quote", reference)
}

func notFound(ref, field string) error {
	return &apperr.Error{Kind: apperr.NotFound, Message: fmt.Sprintf("no rate with reference %q", ref),
		Fields: []apperr.FieldError{{Field: field, Message: "no rate with this reference"}}}
}

func used(ref string) error {
	return apperr.New(apperr.RateUsed, "the rate %s has already been used; create a new one", ref)
}
