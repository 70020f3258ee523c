package deposits

import (
	"context"
	"fmt"
	"time"

	"merchantpay/ent"
	"merchantpay/internal/accounts"
	"merchantpay/internal/money"
	"merchantpay/internal/narration"
	"merchantpay/present/jsonx"
)

// decision is what happens to a deposit.
type decision struct {
	refund string // reject_reason; empty means accepted
	fee    int64
	ref    string // the narration's merchant reference (static_dynamic)
}

// decide applies the account kind's rules in tx. Closing a dynamic account is part
// of the decision: it is a conditional update, so of two deposits racing for
// one account exactly one closes it and the other is refunded.
func (s *Service) decide(ctx context.Context, tx *ent.Tx, acc *ent.FiatAccount, tr Transfer, amount int64, now time.Time) (decision, error) {
	var d decision
	fee, err := s.cfg.Fee.On(amount)
	if err != nil {
		return d, err
	}
	d.fee = fee
	cur := money.Currency(acc.Currency)
	switch {
	case acc.AccountType == accounts.Dynamic && acc.Status != accounts.StatusActive:
		d.refund = alreadyUsed(acc)
		return d, nil
	case acc.Status != accounts.StatusActive:
		d.refund = fmt.Sprintf("account %s is closed", acc.AccountNumber)
		return d, nil
	case accounts.Expired(acc, now):
		d.refund = fmt.Sprintf("the dynamic account %s expired at %s", acc.AccountNumber,
			jsonx.Time(*acc.ExpiresAt))
		return d, nil
	}
	if acc.AccountType == accounts.Dynamic && acc.Amount != nil && acc.RejectAmountCriteria != nil {
		if msg := amountReason(*acc.RejectAmountCriteria, *acc.Amount, amount, cur); msg != "" {
			d.refund = msg
			return d, nil
		}
	}
	if fee >= amount {
		d.refund = fmt.Sprintf("the amount %s %s does not cover the deposit fee of %s %s",
			money.Format(amount, cur), cur, money.Format(fee, cur), cur)
		return d, nil
	}
	switch acc.AccountType {
	case accounts.Dynamic:
		closed, err := s.accounts.Close(ctx, tx, acc)
		if err != nil {
			return d, err
		}
		if !closed {
			d.refund = alreadyUsed(acc)
		}
	case accounts.StaticDynamic:
		// No marker, a malformed one or several different ones: accepted
		// without a merchant reference.
		if ref, ok := narration.Reference(tr.Narration); ok {
			d.ref = ref
		}
	}
	return d, nil
}

func alreadyUsed(acc *ent.FiatAccount) string {
	return fmt.Sprintf("the dynamic account %s was already used by an earlier deposit", acc.AccountNumber)
}

// amountReason says why paid breaks the criteria, or "" when it does not.
func amountReason(criteria string, expected, paid int64, cur money.Currency) string {
	if !accounts.AmountRejected(criteria, expected, paid) {
		return ""
	}
	// A rejected amount differs from the expected one.
	how := "is less than"
	if paid > expected {
		how = "is greater than"
	}
	return fmt.Sprintf("the amount %s %s %s the expected %s %s (reject_amount_criteria %s)",
		money.Format(paid, cur), cur, how, money.Format(expected, cur), cur, criteria)
}
