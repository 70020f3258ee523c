package deposits

import (
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/money"
	"merchantpay/internal/validate"
)

// Transfer is one incoming bank transfer as the rails report it. Empty
// strings mean absent.
type Transfer struct {
	AccountNumber string
	Amount        decimal.Decimal
	Narration     string
	SenderName    string
	SenderBank    string
	// Provider and ProviderReference are set for a live provider's inflow:
	// only an account that provider issued receives it, and the deposit
	// keeps the provider's reference (unique: an inflow is booked once).
	Provider          string
	ProviderReference string
	// NoRefund says the rails that carried the transfer cannot send it
	// back to its payer (a live provider's inflow): it is never booked as
	// refunded. See ReceiveInflow.
	NoRefund bool
}

// Input is the sandbox's simulated transfer request, shared by REST and
// GraphQL. Nil means absent or null (or of the wrong type, already reported
// by the decoder).
type Input struct {
	AccountNumber *string
	Amount        *decimal.Decimal
	Narration     *string
	SenderName    *string
	SenderBank    *string
}

// Validate collects every bad field of a simulated transfer.
func Validate(in Input, f *apperr.Fields) {
	if in.AccountNumber == nil {
		f.Add("account_number", "is required: the 10-digit number of a fiat account")
	} else if !banks.IsAccountNumber(*in.AccountNumber) {
		f.Add("account_number", "must be a 10-digit account number")
	}
	if in.Amount == nil {
		f.Add("amount", "is required")
	} else if msg := money.ValidateAmount(*in.Amount, Currency); msg != "" {
		f.Add("amount", "%s", msg)
	}
	text(f, "narration", in.Narration, MaxNarration)
	text(f, "sender_name", in.SenderName, MaxSenderName)
	text(f, "sender_bank", in.SenderBank, MaxSenderBank)
}

// Transfer turns a validated Input into a Transfer.
func (in Input) Transfer() Transfer {
	var t Transfer
	if in.AccountNumber != nil {
		t.AccountNumber = *in.AccountNumber
	}
	if in.Amount != nil {
		t.Amount = *in.Amount
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	t.Narration, t.SenderName, t.SenderBank = deref(in.Narration), deref(in.SenderName), deref(in.SenderBank)
	return t
}

func (t Transfer) input() Input {
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	return Input{AccountNumber: &t.AccountNumber, Amount: &t.Amount,
		Narration: opt(t.Narration), SenderName: opt(t.SenderName), SenderBank: opt(t.SenderBank)}
}

// text checks an optional free-text field: valid UTF-8 without NUL (which
// PostgreSQL cannot store), at most max characters.
func text(f *apperr.Fields, field string, v *string, max int) {
	switch {
	case v == nil:
	case validate.Text(*v) != "":
		f.Add(field, "%s", validate.Text(*v))
	case utf8.RuneCountInString(*v) > max:
		f.Add(field, "must be at most %d characters", max)
	}
}
