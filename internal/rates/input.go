package rates

import (
	"strings"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
)

// RateQuery asks for the indicative rate of one conversion. Nil means the
// query parameter was absent.
type RateQuery struct {
	FromCurrency, ToCurrency *string
}

// ValidateRateQuery collects every bad query parameter.
func ValidateRateQuery(q RateQuery, f *apperr.Fields) {
	from := currencyField(f, "from_currency", q.FromCurrency, true)
	to := currencyField(f, "to_currency", q.ToCurrency, true)
	if from != "" && from == to {
		f.Add("to_currency", "must differ from from_currency")
	}
}

// CreateInput is a quote request, shared by REST and GraphQL. Nil means the
// field was absent (or of the wrong type, already reported by the decoder).
type CreateInput struct {
	FromCurrency     *string
	ToCurrency       *string
	FromAmount       *decimal.Decimal
	ToAmount         *decimal.Decimal
	TransactionType  *string
	DepositMethod    *string
	WithdrawalMethod *string
}

// validMethod accepts a method name: 1 to 64 letters, digits, - or _.
func validMethod(m string) bool {
	if m == "" || len(m) > 64 {
		return false
	}
	for _, r := range m {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// ValidateCreate collects every bad field of in. Field names are the REST
// body's.
func ValidateCreate(in CreateInput, f *apperr.Fields) {
	from := currencyField(f, "from_currency", in.FromCurrency, true)
	to := currencyField(f, "to_currency", in.ToCurrency, true)
	if from != "" && from == to {
		f.Add("to_currency", "must differ from from_currency")
	}
	amount := func(field string, d decimal.Decimal, c money.Currency) {
		if c == "" {
			if d.Sign() <= 0 {
				f.Add(field, "must be greater than 0")
			}
			return
		}
		if msg := money.ValidateAmount(d, c); msg != "" {
			f.Add(field, "%s", msg)
		}
	}
	switch {
	case in.FromAmount != nil && in.ToAmount != nil:
		f.Add("from_amount", "give only one of from_amount and to_amount")
		f.Add("to_amount", "give only one of from_amount and to_amount")
	case in.FromAmount == nil && in.ToAmount == nil:
		f.Add("from_amount", "one of from_amount and to_amount is required")
		f.Add("to_amount", "one of from_amount and to_amount is required")
	case in.FromAmount != nil:
		amount("from_amount", *in.FromAmount, from)
	default:
		amount("to_amount", *in.ToAmount, to)
	}
	tt, ok := txType(in.TransactionType)
	if !ok {
		f.Add("transaction_type", "must be swap, deposit or withdrawal")
	}
	if in.DepositMethod != nil {
		switch {
		case *in.DepositMethod != DepositMethodCryptoPay:
			f.Add("deposit_method", "must be crypto-pay")
		case ok && tt != Deposit:
			f.Add("deposit_method", "is only valid with transaction_type deposit")
		}
	}
	if in.WithdrawalMethod != nil {
		switch {
		case !validMethod(*in.WithdrawalMethod):
			f.Add("withdrawal_method", "must be 1 to 64 letters, digits, - or _")
		case ok && tt != Withdrawal:
			f.Add("withdrawal_method", "is only valid with transaction_type withdrawal")
		}
	}
}

// txType reads a transaction_type (any case); absent means swap.
func txType(v *string) (string, bool) {
	if v == nil {
		return Swap, true
	}
	t := strings.ToLower(*v)
	return t, validTxType(t)
}

// currencyField checks a currency code field and returns it, or "" when bad.
func currencyField(f *apperr.Fields, field string, v *string, required bool) money.Currency {
	if v == nil {
		if required {
			f.Add(field, "is required")
		}
		return ""
	}
	c, ok := money.Parse(*v)
	if !ok {
		f.Add(field, "must be a supported currency code (%s)", strings.Join(currencyCodes(), ", "))
		return ""
	}
	return c
}

func currencyCodes() []string {
	all := money.All()
	out := make([]string, len(all))
	for i, c := range all {
		out[i] = string(c)
	}
	return out
}

// CheckBeside adds to f an amount or currency a request sent beside the
// quote q (a cross withdrawal or deposit) that is not the quote's to_amount
// or to_currency: the quote fixes what is paid, and anything else would be
// silently ignored. Absent (nil) values are fine.
func CheckBeside(q *ent.Quote, amount *decimal.Decimal, currency *string, f *apperr.Fields) {
	if currency != nil && *currency != q.ToCurrency {
		f.Add("currency", "must be the quote's to_currency (%s) or absent", q.ToCurrency)
	}
	if to := money.FromMinor(q.ToAmount, money.Currency(q.ToCurrency)); amount != nil && !amount.Equal(to) {
		f.Add("amount", "must be the quote's to_amount (%s) or absent", to)
	}
}
