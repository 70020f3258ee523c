package transactions

import (
	"strings"
	"time"
	"unicode/utf8"

	"merchantpay/ent/predicate"
	"merchantpay/ent/transaction"
	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
)

// Filter narrows a list. Nil fields do not narrow it.
type Filter struct {
	Type   *string
	Status *string
	// Currency is the transaction's currency (its currency field).
	Currency *string
	// CreatedFrom is inclusive, CreatedTo exclusive.
	CreatedFrom *time.Time
	CreatedTo   *time.Time
	// Search is either reference, the service's or the merchant's, each
	// without regard to case.
	Search *string
}

// FilterFields are the names a transport gives the filter's fields in
// its errors.
type FilterFields struct {
	Type, Status, Currency, CreatedFrom, CreatedTo, Search string
}

// Validate names the bad filter fields.
func (f Filter) Validate(names FilterFields, errs *apperr.Fields) {
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
	check(names.Type, f.Type, Types)
	check(names.Status, f.Status, Statuses)
	if f.Currency != nil {
		if _, ok := money.Parse(*f.Currency); !ok {
			codes := make([]string, 0, len(money.All()))
			for _, c := range money.All() {
				codes = append(codes, string(c))
			}
			errs.Add(names.Currency, "must be one of %s", strings.Join(codes, ", "))
		}
	}
	if f.CreatedFrom != nil && f.CreatedTo != nil && !f.CreatedFrom.Before(*f.CreatedTo) {
		errs.Add(names.CreatedTo, "must be after %s", names.CreatedFrom)
	}
	if f.Search != nil && (*f.Search == "" || utf8.RuneCountInString(*f.Search) > 200) {
		errs.Add(names.Search, "must be 1 to 200 characters")
	}
}

// predicates are the filter's conditions.
func (f Filter) predicates() []predicate.Transaction {
	var ps []predicate.Transaction
	if f.Type != nil {
		ps = append(ps, transaction.Type(*f.Type))
	}
	if f.Status != nil {
		ps = append(ps, transaction.Status(*f.Status))
	}
	if f.Currency != nil {
		ps = append(ps, transaction.Currency(*f.Currency))
	}
	if f.CreatedFrom != nil {
		ps = append(ps, transaction.CreatedAtGTE(*f.CreatedFrom))
	}
	if f.CreatedTo != nil {
		ps = append(ps, transaction.CreatedAtLT(*f.CreatedTo))
	}
	if f.Search != nil {
		service, _ := ServiceReference(*f.Search) // either reference is found in any case
		ps = append(ps, transaction.Or(transaction.Reference(service),
			transaction.MerchantReferenceKey(ReferenceKey(*f.Search))))
	}
	return ps
}
