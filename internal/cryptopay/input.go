package cryptopay

import (
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
	"merchantpay/internal/transactions"
	"merchantpay/internal/validate"
)

// This file holds the deposit start request and its validation, shared by
// REST and GraphQL.

// DepositInput is a deposit start (POST /transactions/deposit, GraphQL
// startDeposit). Nil means absent or null (or of the wrong type, already
// reported by the decoder). Field errors name the REST body's fields.
type DepositInput struct {
	DepositMethod *string
	// RequirementAbsent is set when the requirement object is missing.
	RequirementAbsent  bool
	ProductName        *string
	ProductDescription *string
	FailureURL         *string
	SuccessURL         *string
	// Direct: Amount in Currency. Cross: RateReference.
	Amount        *decimal.Decimal
	Currency      *string
	RateReference *string
	Reference     *string
	FeeBearer     *string
}

// Cross reports whether in asks for a cross deposit.
func (in DepositInput) Cross() bool { return in.RateReference != nil }

// ValidateDeposit collects every bad field of in.
func ValidateDeposit(in DepositInput, f *apperr.Fields) {
	switch {
	case in.DepositMethod == nil:
		f.Add("deposit_method", "is required: crypto-pay")
	case *in.DepositMethod != Method:
		f.Add("deposit_method", "must be crypto-pay")
	}
	if in.RequirementAbsent {
		f.Add("requirement", "is required")
	} else {
		switch {
		case in.ProductName == nil:
			f.Add("requirement.product_name", "is required")
		case strings.TrimSpace(*in.ProductName) == "":
			f.Add("requirement.product_name", "must not be empty")
		default:
			text(f, "requirement.product_name", *in.ProductName, MaxProductName)
		}
		if in.ProductDescription != nil {
			text(f, "requirement.product_description", *in.ProductDescription, MaxProductDescription)
		}
		for _, u := range []struct {
			field string
			v     *string
		}{{"requirement.failure_url", in.FailureURL}, {"requirement.success_url", in.SuccessURL}} {
			if u.v != nil {
				if msg := validate.HTTPURL(*u.v); msg != "" {
					f.Add(u.field, "%s", msg)
				}
			}
		}
	}
	if in.Cross() {
		switch r := *in.RateReference; {
		case strings.TrimSpace(r) == "":
			f.Add("rate_reference", "must not be empty")
		case validate.Text(r) != "":
			f.Add("rate_reference", "%s", validate.Text(r))
		case len(r) > maxRateReference:
			f.Add("rate_reference", "must be at most %d characters", maxRateReference)
		}
		// The quote gives the amounts. An integration that always sends
		// amount and currency may send them beside it: they must then be
		// the quote's (amounts), never something else silently ignored.
		if in.Currency != nil {
			if _, ok := money.Parse(*in.Currency); !ok {
				f.Add("currency", "must be a supported currency code (%s)", currencyList())
			}
		}
		if in.Amount != nil && in.Amount.Sign() <= 0 {
			f.Add("amount", "must be greater than 0")
		}
	} else {
		var cur money.Currency
		if in.Currency == nil {
			f.Add("currency", "is required for a direct deposit (or give rate_reference for a cross deposit)")
		} else if c, ok := money.Parse(*in.Currency); !ok {
			f.Add("currency", "must be a supported currency code (%s)", currencyList())
		} else {
			cur = c
		}
		switch {
		case in.Amount == nil:
			f.Add("amount", "is required for a direct deposit (or give rate_reference for a cross deposit)")
		case cur != "":
			if msg := money.ValidateAmount(*in.Amount, cur); msg != "" {
				f.Add("amount", "%s", msg)
			}
		case in.Amount.Sign() <= 0:
			f.Add("amount", "must be greater than 0")
		}
	}
	if in.Reference != nil {
		if msg := transactions.CheckMerchantReference(*in.Reference); msg != "" {
			f.Add("reference", "%s", msg)
		}
	}
	if in.FeeBearer != nil && *in.FeeBearer != BearerMerchant && *in.FeeBearer != BearerBeneficiary {
		f.Add("fee_bearer", "must be merchant or beneficiary")
	}
}

func currencyList() string {
	all := money.All()
	out := make([]string, len(all))
	for i, c := range all {
		out[i] = string(c)
	}
	return strings.Join(out, ", ")
}

// text checks free text: valid UTF-8 without NUL (which PostgreSQL cannot
// store), at most max characters.
func text(f *apperr.Fields, field, v string, max int) {
	switch {
	case validate.Text(v) != "":
		f.Add(field, "%s", validate.Text(v))
	case utf8.RuneCountInString(v) > max:
		f.Add(field, "must be at most %d characters", max)
	}
}
