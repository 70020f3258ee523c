// Package transactions reads transactions: by the service's reference or the
// merchant's (without regard to case), and as a filtered, paginated list.
package transactions

import (
	"context"
	"strings"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/apperr"
	"merchantpay/internal/page"
	"merchantpay/internal/store"
)

// Types and statuses a list may filter on.
var (
	Types    = []string{"DEPOSIT", "WITHDRAWAL", "SWAP"}
	Statuses = []string{"pending", "success", "failed", "refunded"}
)

// Service reads transactions.
type Service struct{ db *store.DB }

// New returns the service.
func New(db *store.DB) *Service { return &Service{db: db} }

// ReferenceKey is how merchant references are compared: without regard to case.
func ReferenceKey(ref string) string { return strings.ToLower(ref) }

// Get finds a transaction of the ctx tenant by the service's reference or,
// failing that, by the merchant's reference.
func (s *Service) Get(ctx context.Context, ref string) (*ent.Transaction, error) {
	if ref == "" || len(ref) > 200 {
		return nil, apperr.New(apperr.NotFound, "no transaction with reference %q", ref)
	}
	// Two exact look-ups, each on its unique index, rather than one OR: the
	// planner may answer the OR by walking the merchant's index, which
	// reads every transaction of the merchant.
	c := s.db.Client(ctx)
	t, err := c.Transaction.Query().Where(transaction.Reference(ref)).First(ctx)
	if ent.IsNotFound(err) {
		t, err = c.Transaction.Query().Where(transaction.MerchantReferenceKey(ReferenceKey(ref))).First(ctx)
	}
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no transaction with reference %q", ref)
	}
	return t, store.Classify(err)
}

// Filter narrows a list.
type Filter struct {
	Type   *string
	Status *string
}

// Validate names the bad filter fields.
func (f Filter) Validate(typeField, statusField string, errs *apperr.Fields) {
	check := func(field string, v *string, allowed []string) {
		if v == nil {
			return
		}
		for _, a := range allowed {
			if *v == a {
				return
			}
		}
		errs.Add(field, "must be one of %s", strings.Join(allowed, ", "))
	}
	check(typeField, f.Type, Types)
	check(statusField, f.Status, Statuses)
}

// List returns a page of the tenant's transactions, newest first.
func (s *Service) List(ctx context.Context, f Filter, p page.Params) ([]*ent.Transaction, page.Info, error) {
	q := s.db.Client(ctx).Transaction.Query()
	if f.Type != nil {
		q = q.Where(transaction.Type(*f.Type))
	}
	if f.Status != nil {
		q = q.Where(transaction.Status(*f.Status))
	}
	if p.After != nil {
		q = q.Where(transaction.Or(
			transaction.CreatedAtLT(p.After.Time),
			transaction.And(transaction.CreatedAt(p.After.Time), transaction.IDLT(p.After.ID)),
		))
	}
	rows, err := q.Order(ent.Desc(transaction.FieldCreatedAt), ent.Desc(transaction.FieldID)).Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return nil, page.Info{}, store.Classify(err)
	}
	rows, info := page.Cut(rows, p.Limit, Cursor)
	return rows, info, nil
}

// Cursor is a transaction's position in a list.
func Cursor(t *ent.Transaction) page.Cursor { return page.Cursor{Time: t.CreatedAt, ID: t.ID} }
