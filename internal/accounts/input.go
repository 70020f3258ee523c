package accounts

import (
	"strings"

	"github.com/shopspring/decimal"

	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
	"merchantpay/internal/validate"
)

// This file holds the fiat-account request and its validation, shared by
// REST and GraphQL.

// CreateInput is a fiat-account request, shared by REST and GraphQL. Nil
// means absent or null (or of the wrong type, already reported by the
// decoder).
type CreateInput struct {
	AccountType *string
	Reference   *string
	Currency    *string
	Amount      *decimal.Decimal
	// ExpiresAt is the lifetime in minutes, as the request gives it.
	ExpiresAt            *decimal.Decimal
	RejectAmountCriteria *string
}

// Validate collects every bad field of a fiat-account request. prefix is
// prepended to field names ("account." for the inline account of a wallet).
func Validate(in CreateInput, prefix string, f *apperr.Fields) {
	kind := ""
	if in.AccountType == nil {
		f.Add(prefix+"account_type", "is required: one of %s", strings.Join(Types, ", "))
	} else if !oneOf(*in.AccountType, Types) {
		f.Add(prefix+"account_type", "must be one of %s", strings.Join(Types, ", "))
	} else {
		kind = *in.AccountType
	}
	validateCommon(in, prefix, true, f)
	switch kind {
	case Dynamic:
		if in.Amount == nil {
			f.Add(prefix+"amount", "is required for dynamic accounts")
		}
		if in.ExpiresAt == nil {
			f.Add(prefix+"expires_at", "is required for dynamic accounts: whole minutes from 1 to %d", MaxExpiryMinutes)
		}
		validateDynamic(in, prefix, f)
	case Static, StaticDynamic:
		mustBeAbsent(in, prefix, kind, f)
	default:
		// The type is unknown: still check the form of what was sent.
		validateDynamic(in, prefix, f)
	}
}

// ValidateGlobal collects every bad field of a global-account request:
// account_type, if given, must be static_dynamic, and currency defaults to
// NGN.
func ValidateGlobal(in CreateInput, prefix string, f *apperr.Fields) {
	if in.AccountType != nil && *in.AccountType != StaticDynamic {
		f.Add(prefix+"account_type", "must be static_dynamic: the global account is a static_dynamic account")
	}
	validateCommon(in, prefix, false, f)
	mustBeAbsent(in, prefix, StaticDynamic, f)
}

func validateCommon(in CreateInput, prefix string, currencyRequired bool, f *apperr.Fields) {
	if in.Reference != nil {
		if msg := validate.Reference(*in.Reference); msg != "" {
			f.Add(prefix+"account_reference", "%s", msg)
		}
	}
	if in.Currency == nil {
		if currencyRequired {
			f.Add(prefix+"currency", "is required: NGN")
		}
	} else if *in.Currency != string(Currency) {
		f.Add(prefix+"currency", "must be NGN: fiat accounts are issued in NGN only")
	}
}

func validateDynamic(in CreateInput, prefix string, f *apperr.Fields) {
	if in.Amount != nil {
		if msg := money.ValidateAmount(*in.Amount, Currency); msg != "" {
			f.Add(prefix+"amount", "%s", msg)
		}
	}
	if in.ExpiresAt != nil {
		if _, ok := expiryMinutes(*in.ExpiresAt); !ok {
			f.Add(prefix+"expires_at", "must be a whole number of minutes from 1 to %d", MaxExpiryMinutes)
		}
	}
	if in.RejectAmountCriteria != nil && !oneOf(*in.RejectAmountCriteria, Criteria) {
		f.Add(prefix+"reject_amount_criteria", "must be one of %s", strings.Join(Criteria, ", "))
	}
}

func mustBeAbsent(in CreateInput, prefix, kind string, f *apperr.Fields) {
	if in.Amount != nil {
		f.Add(prefix+"amount", "must be absent or null for %s accounts", kind)
	}
	if in.ExpiresAt != nil {
		f.Add(prefix+"expires_at", "must be absent or null for %s accounts", kind)
	}
	if in.RejectAmountCriteria != nil {
		f.Add(prefix+"reject_amount_criteria", "must be absent or null for %s accounts", kind)
	}
}

func expiryMinutes(d decimal.Decimal) (int64, bool) {
	if !d.IsInteger() || d.LessThan(decimal.NewFromInt(1)) || d.GreaterThan(decimal.NewFromInt(MaxExpiryMinutes)) {
		return 0, false
	}
	return d.IntPart(), true
}

func oneOf(s string, set []string) bool {
	for _, v := range set {
		if s == v {
			return true
		}
	}
	return false
}
