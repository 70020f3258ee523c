package rails

import (
	"context"
	"errors"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/tenant"
)

// ResolveInput is a name-enquiry request (POST /misc/banks/resolve), shared by
// REST and GraphQL. Nil means absent (or of the wrong type, already reported).
type ResolveInput struct {
	Bank    *string
	Account *string
}

// Resolved is a resolved bank account, the answer of a name enquiry.
type Resolved struct {
	BankName      string
	BankCode      string
	AccountNumber string
	AccountName   string
}

// ValidateResolve collects every bad field of in.
func ValidateResolve(in ResolveInput, f *apperr.Fields) {
	if in.Bank == nil || *in.Bank == "" {
		f.Add("bank", "is required: a bank code from GET /misc/banks?country=NG")
	}
	if in.Account == nil || *in.Account == "" {
		f.Add("account", "is required: a 10-digit account number")
	} else if !banks.IsAccountNumber(*in.Account) {
		f.Add("account", "must be a 10-digit account number")
	}
}

// NameEnquiry is the resolve operation: it checks the request against the
// Nigerian bank list and asks the rails for the holder's name.
type NameEnquiry struct {
	dir   *banks.Directory
	rails Rails
	// router, when set, picks the rails by the mode of the caller.
	router *Router
}

// NewRoutedNameEnquiry returns the name-enquiry operation on the rails of
// the caller's mode: the sandbox in test mode, the configured provider in
// live mode.
func NewRoutedNameEnquiry(dir *banks.Directory, r *Router) *NameEnquiry {
	return &NameEnquiry{dir: dir, rails: r.Sandbox, router: r}
}

// NewNameEnquiry returns the name-enquiry operation.
func NewNameEnquiry(dir *banks.Directory, r Rails) *NameEnquiry {
	return &NameEnquiry{dir: dir, rails: r}
}

// Check adds in's bad fields to f (which may hold the caller's own, such as
// a field of the wrong JSON type) and returns the error Resolve would: a
// VALIDATION_ERROR naming every bad field, an unknown bank among them, or
// UNKNOWN_BANK when the bank is all that is wrong.
func (e *NameEnquiry) Check(in ResolveInput, f *apperr.Fields) error {
	var g apperr.Fields
	ValidateResolve(in, &g)
	f.Merge(&g)
	var unknown *apperr.Error
	if in.Bank != nil && *in.Bank != "" {
		if _, ok := e.dir.NGByCode(*in.Bank); !ok {
			msg := "is not a bank code of the Nigerian bank list"
			if _, gh := e.dir.GHByCode(*in.Bank); gh {
				msg = "is a Ghanaian bank: only Nigerian accounts can be resolved"
			}
			unknown = &apperr.Error{Kind: apperr.UnknownBank, Message: "bank " + *in.Bank + " " + msg,
				Fields: []apperr.FieldError{{Field: "bank", Message: msg}}}
		}
	}
	return f.With(unknown)
}

// Resolve resolves a Nigerian account: VALIDATION_ERROR for bad fields,
// UNKNOWN_BANK for a code outside the Nigerian list (Ghanaian codes too: only
// Nigerian accounts can be resolved), ACCOUNT_NOT_RESOLVED when the bank
// knows no such account. tx is the caller's database transaction, if any: a
// live provider is never called inside one (ErrInTransaction).
func (e *NameEnquiry) Resolve(ctx context.Context, tx *ent.Tx, in ResolveInput) (Resolved, error) {
	if err := e.Check(in, &apperr.Fields{}); err != nil {
		return Resolved{}, err
	}
	code, account := *in.Bank, *in.Account
	bank, _ := e.dir.NGByCode(code)
	var name string
	var err error
	if e.router != nil {
		t, ok := tenant.From(ctx)
		if !ok {
			return Resolved{}, tenant.ErrNoTenant
		}
		name, err = e.router.ResolveAccount(ctx, tx, t.Mode, bank.Code, account)
	} else {
		name, err = e.rails.ResolveAccount(ctx, bank.Code, account)
	}
	if err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) && ae.Kind == apperr.AccountNotResolved {
			return Resolved{}, &apperr.Error{Kind: apperr.AccountNotResolved,
				Message: "account " + account + " could not be resolved at " + bank.Name,
				Fields:  []apperr.FieldError{{Field: "account", Message: "no such account at this bank"}}, Cause: err}
		}
		return Resolved{}, err
	}
	return Resolved{BankName: bank.Name, BankCode: bank.Code, AccountNumber: account, AccountName: name}, nil
}
