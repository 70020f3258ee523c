package withdrawals

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/money"
	"merchantpay/internal/transactions"
	"merchantpay/internal/validate"
)

// Beneficiary is the withdraw body's beneficiary object. Nil means absent or
// null (or of the wrong type, already reported by the decoder).
type Beneficiary struct {
	Email         *string
	Phone         *string
	Country       *string // Ghana only, optional, "GH"
	Bank          *string
	Branch        *string // Ghana only
	AccountName   *string
	AccountNumber *string
	AccountType   *string // Ghana only: individual or corporate
}

// Input is a withdrawal request, shared by REST and GraphQL. Nil means
// absent or null. Field names in errors are the REST body's.
type Input struct {
	// Beneficiary is required.
	Beneficiary *Beneficiary
	// Amount and Currency make a direct withdrawal.
	Amount   *decimal.Decimal
	Currency *string
	// RateReference makes a cross withdrawal: the withdrawal quote's
	// to_amount is paid in its to_currency (NGN or GHS).
	RateReference *string
	Narration     *string
	// Reference is the merchant's reference, unique per merchant and mode
	// without regard to case.
	Reference *string
	// FeeBearer is merchant (the default) or beneficiary.
	FeeBearer *string
}

func (in Input) cross() bool { return in.RateReference != nil }

// Validate collects every bad field of in that can be judged without the
// database. The beneficiary's shape follows currency; for a cross
// withdrawal it follows the quote's to_currency, so only what both shapes
// share is checked here and Withdraw checks the rest once it has the quote.
func Validate(in Input, f *apperr.Fields) {
	country := ""
	if in.cross() {
		switch r := *in.RateReference; {
		case strings.TrimSpace(r) == "":
			f.Add("rate_reference", "must not be empty")
		case validate.Text(r) != "":
			f.Add("rate_reference", "%s", validate.Text(r))
		}
		// The quote fixes what is paid. An integration that always sends
		// amount and currency may send them beside it: they must then be
		// the quote's (checkQuote), never something else silently ignored.
		if in.Currency != nil && countryOf(money.Currency(*in.Currency)) == "" {
			f.Add("currency", "must be NGN (Nigerian banks) or GHS (Ghanaian banks)")
		}
		if in.Amount != nil && in.Amount.Sign() <= 0 {
			f.Add("amount", "must be greater than 0")
		}
	} else {
		var cur money.Currency
		switch {
		case in.Currency == nil:
			f.Add("currency", "is required (NGN or GHS), or give rate_reference for a cross withdrawal")
		case countryOf(money.Currency(*in.Currency)) == "":
			f.Add("currency", "must be NGN (Nigerian banks) or GHS (Ghanaian banks)")
		default:
			cur = money.Currency(*in.Currency)
			country = countryOf(cur)
		}
		switch {
		case in.Amount == nil:
			f.Add("amount", "is required, or give rate_reference for a cross withdrawal")
		case cur != "":
			if msg := money.ValidateAmount(*in.Amount, cur); msg != "" {
				f.Add("amount", "%s", msg)
			}
		case in.Amount.Sign() <= 0:
			f.Add("amount", "must be greater than 0")
		case in.Amount.GreaterThan(decimal.New(money.MaxUnits, 0)):
			f.Add("amount", "must be at most %d", money.MaxUnits)
		}
	}
	if in.Narration != nil {
		switch n := *in.Narration; {
		case validate.Text(n) != "":
			f.Add("narration", "%s", validate.Text(n))
		case utf8.RuneCountInString(n) > MaxNarration:
			f.Add("narration", "must be at most %d characters", MaxNarration)
		}
	}
	if in.Reference != nil {
		if msg := transactions.CheckMerchantReference(*in.Reference); msg != "" {
			f.Add("reference", "%s", msg)
		}
	}
	if in.FeeBearer != nil && *in.FeeBearer != FeeBearerMerchant && *in.FeeBearer != FeeBearerBeneficiary {
		f.Add("fee_bearer", "must be merchant or beneficiary")
	}
	if in.Beneficiary == nil {
		f.Add("beneficiary", "is required")
		return
	}
	validateBeneficiary(*in.Beneficiary, country, f)
}

// validateBeneficiary checks the beneficiary for country (banks.CountryNG or
// CountryGH), or, with country "", only what both shapes share.
func validateBeneficiary(b Beneficiary, country string, f *apperr.Fields) {
	const p = "beneficiary."
	if b.Email == nil {
		f.Add(p+"email", "is required")
	} else if msg := validate.Email(*b.Email); msg != "" {
		f.Add(p+"email", "%s", msg)
	}
	if b.Phone != nil {
		if msg := validate.Phone(*b.Phone); msg != "" {
			f.Add(p+"phone", "%s", msg)
		}
	}
	switch {
	case b.Bank == nil:
		f.Add(p+"bank", "is required: a bank code from GET /misc/banks")
	case *b.Bank == "" || len(*b.Bank) > MaxBankCode:
		f.Add(p+"bank", "must be a bank code from GET /misc/banks")
	}
	if b.AccountName == nil {
		f.Add(p+"account_name", "is required")
	} else if msg := validate.Name(*b.AccountName); msg != "" {
		f.Add(p+"account_name", "%s", msg)
	}
	switch {
	case b.AccountNumber == nil:
		f.Add(p+"account_number", "is required")
	case country == banks.CountryNG && !digits(*b.AccountNumber, 10, 10):
		f.Add(p+"account_number", "must be a 10-digit NUBAN account number")
	case !digits(*b.AccountNumber, 6, 20):
		f.Add(p+"account_number", "must be 6 to 20 digits")
	}
	if country == banks.CountryNG {
		return // the Ghanaian fields are not part of the Nigerian shape
	}
	required := country == banks.CountryGH
	if b.Country != nil && *b.Country != banks.CountryGH {
		f.Add(p+"country", "must be GH")
	}
	switch {
	case b.Branch == nil:
		if required {
			f.Add(p+"branch", "is required for a Ghanaian bank: a branch code of the bank from GET /misc/banks?country=GH")
		}
	case *b.Branch == "" || len(*b.Branch) > MaxBankCode:
		f.Add(p+"branch", "must be a branch code of the bank from GET /misc/banks?country=GH")
	}
	switch {
	case b.AccountType == nil:
		if required {
			f.Add(p+"account_type", "is required for a Ghanaian bank: individual or corporate")
		}
	case *b.AccountType != AccountIndividual && *b.AccountType != AccountCorporate:
		f.Add(p+"account_type", "must be individual or corporate")
	}
}

func digits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Check validates in as Withdraw does before touching the database, adding
// its findings to f, which may already hold the decoder's (one entry per
// field). With any bad field it returns a VALIDATION_ERROR naming them all,
// an unknown bank or branch among them; otherwise UNKNOWN_BANK or
// UNKNOWN_BRANCH for a direct withdrawal to a bank or branch not in the
// lists, else nil.
func (s *Service) Check(in Input, f *apperr.Fields) error {
	var g apperr.Fields
	Validate(in, &g)
	f.Merge(&g)
	var bankErr *apperr.Error
	switch {
	case in.Beneficiary == nil:
	case !in.cross() && in.Currency != nil:
		bankErr = s.checkBank(*in.Beneficiary, countryOf(money.Currency(*in.Currency)))
	case in.cross():
		// The quote decides the country (checkQuote, once it is read); a
		// code in neither list is unknown whatever it pays out, and is
		// named now with the other bad fields.
		bankErr = s.checkAnyBank(*in.Beneficiary)
	}
	return f.With(bankErr)
}

// checkAnyBank refuses a beneficiary bank code that is in neither the
// Nigerian nor the Ghanaian list.
func (s *Service) checkAnyBank(b Beneficiary) *apperr.Error {
	if b.Bank == nil || *b.Bank == "" {
		return nil
	}
	if _, ok := s.banks.NGByCode(*b.Bank); ok {
		return nil
	}
	if _, ok := s.banks.GHByCode(*b.Bank); ok {
		return nil
	}
	return &apperr.Error{Kind: apperr.UnknownBank,
		Message: fmt.Sprintf("bank %q is in neither the Nigerian nor the Ghanaian bank list (GET /misc/banks)", *b.Bank),
		Fields:  []apperr.FieldError{{Field: "beneficiary.bank", Message: "is not a bank code of the Nigerian or Ghanaian bank list"}}}
}

// checkBank finds the beneficiary's bank (and Ghanaian branch) in the lists
// of country; nil when they are there or not given.
func (s *Service) checkBank(b Beneficiary, country string) *apperr.Error {
	if b.Bank == nil || *b.Bank == "" {
		return nil
	}
	switch country {
	case banks.CountryNG:
		if _, ok := s.banks.NGByCode(*b.Bank); !ok {
			return &apperr.Error{Kind: apperr.UnknownBank,
				Message: fmt.Sprintf("bank %q is not in the Nigerian bank list (GET /misc/banks?country=NG)", *b.Bank),
				Fields:  []apperr.FieldError{{Field: "beneficiary.bank", Message: "is not a bank code of the Nigerian bank list"}}}
		}
	case banks.CountryGH:
		bank, ok := s.banks.GHByCode(*b.Bank)
		if !ok {
			return &apperr.Error{Kind: apperr.UnknownBank,
				Message: fmt.Sprintf("bank %q is not in the Ghanaian bank list (GET /misc/banks?country=GH)", *b.Bank),
				Fields:  []apperr.FieldError{{Field: "beneficiary.bank", Message: "is not a bank code of the Ghanaian bank list"}}}
		}
		if b.Branch != nil && *b.Branch != "" {
			if _, ok := s.banks.GHBranch(bank.Code, *b.Branch); !ok {
				return &apperr.Error{Kind: apperr.UnknownBranch,
					Message: fmt.Sprintf("branch %q is not a branch of %s (%s)", *b.Branch, bank.Name, bank.Code),
					Fields:  []apperr.FieldError{{Field: "beneficiary.branch", Message: "is not a branch code of this bank"}}}
			}
		}
	}
	return nil
}
