package railnotices

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/apperr"
	"merchantpay/internal/deposits"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/withdrawals"
)

// payout moves the withdrawal the provider names on by its outcome.
func (s *Service) payout(ctx context.Context, tx *ent.Tx, provider string, n rails.PayoutNotice) (result, error) {
	r := result{kind: "payout", reference: n.ProviderReference}
	t, err := s.Withdrawals.ByProviderReference(ctx, tx, n.ProviderReference)
	if err != nil {
		return r, err
	}
	if t == nil || t.Provider == nil || *t.Provider != provider {
		r.outcome, r.keepBody = UnknownTransaction, true
		r.detail = "no payout of ours was submitted to " + provider + " under this reference"
		s.log().Warn("provider payout notice for no payout of ours", "provider", provider, "provider_reference", n.ProviderReference)
		return r, nil
	}
	outcome, detail, err := s.Withdrawals.ApplyNotice(ctx, tx, t, n, s.Owner)
	if err != nil {
		return r, err
	}
	r.outcome, r.detail = outcome, detail
	if outcome == withdrawals.NoticeFlagged {
		r.keepBody = true
		s.flagged(provider, t.Reference, detail)
	}
	return r, nil
}

// inflow books money received into a virtual account the provider issued,
// once per provider reference, in tx, the notice's transaction; an account
// we do not know is recorded and credits nobody.
func (s *Service) inflow(ctx context.Context, tx *ent.Tx, provider string, n rails.InflowNotice) (result, error) {
	r := result{kind: "inflow", reference: n.ProviderReference}
	if n.ProviderReference == "" {
		r.outcome, r.keepBody, r.detail = Ignored, true, "an inflow without the provider's reference cannot be booked once"
		return r, nil
	}
	booked, err := tx.Client().Transaction.Query().Where(transaction.ProviderReference(n.ProviderReference)).Exist(ctx)
	if err != nil {
		return r, store.Classify(err)
	}
	if booked {
		r.outcome, r.detail = DuplicateInflow, "the inflow is booked already"
		return r, nil
	}
	if n.Currency != deposits.Currency || n.Amount <= 0 {
		// Money in another currency (or no positive amount) is credited to
		// nobody: flagged, its body kept for an operator.
		r.outcome, r.keepBody = Flagged, true
		r.detail = fmt.Sprintf("an inflow of %d minor units of %q: virtual accounts take positive NGN amounts", n.Amount, n.Currency)
		s.log().Error("provider inflow flagged: not credited, recorded for an operator", "provider", provider,
			"provider_reference", n.ProviderReference, "account_number", n.AccountNumber, "flag", r.detail)
		s.Metrics.Flagged(provider)
		return r, nil
	}
	in, err := s.Deposits.ReceiveInflow(ctx, tx, deposits.Transfer{
		AccountNumber: n.AccountNumber,
		Amount:        money.FromMinor(n.Amount, deposits.Currency),
		Narration:     cut(n.Narration, deposits.MaxNarration),
		SenderName:    cut(n.SenderName, deposits.MaxSenderName),
		SenderBank:    cut(n.SenderBank, deposits.MaxSenderBank),
		Provider:      provider, ProviderReference: n.ProviderReference,
		NoRefund: !s.Router.RefundsInflows(provider),
	})
	var refused *deposits.NotCredited
	if errors.As(err, &refused) {
		r.outcome, r.keepBody, r.detail = Unbooked, true, refused.Reason
		s.log().Error("provider inflow not credited: the account's rules refuse it and the provider cannot send it back; recorded for an operator",
			"provider", provider, "provider_reference", n.ProviderReference, "account_number", n.AccountNumber, "reason", refused.Reason)
		return r, nil
	}
	if k := apperr.KindOf(err); err != nil && (k == apperr.NotFound || k == apperr.Validation) {
		r.outcome, r.keepBody = UnknownAccount, true
		r.detail = "no virtual account " + n.AccountNumber + " issued by " + provider
		s.log().Error("provider inflow into an account we do not know: acknowledged, credited to nobody, recorded for an operator",
			"provider", provider, "provider_reference", n.ProviderReference, "account_number", n.AccountNumber)
		return r, nil
	}
	if err != nil {
		return r, err
	}
	dep := in.Transaction
	r.outcome, r.detail = Applied, dep.Reference+" "+dep.Status
	if in.RefDropped != "" {
		r.detail += "; credited without the narration's reference: " + in.RefDropped
		s.log().Warn("provider inflow credited without the narration's reference",
			"provider", provider, "provider_reference", n.ProviderReference, "reference", dep.Reference, "why", in.RefDropped)
	}
	return r, nil
}

// order ends the crypto-pay deposit of a paid or closed order.
func (s *Service) order(ctx context.Context, tx *ent.Tx, provider string, n rails.OrderNotice) (result, error) {
	r := result{kind: "order", reference: n.TradeNo}
	if r.reference == "" {
		r.reference = n.ProviderReference
	}
	t, err := s.CryptoPay.ByProviderReference(ctx, tx, n.TradeNo, n.ProviderReference)
	if err != nil {
		return r, err
	}
	if t == nil || t.Provider == nil || *t.Provider != provider {
		r.outcome, r.keepBody = UnknownTransaction, true
		r.detail = "no crypto-pay deposit of ours has this order at " + provider
		return r, nil
	}
	outcome, detail, err := s.CryptoPay.ApplyOrder(ctx, tx, t, n.Status, n.Amount, n.Currency)
	if err != nil {
		return r, err
	}
	r.outcome, r.detail = outcome, detail
	if outcome == Flagged {
		r.keepBody = true
		s.flagged(provider, t.Reference, detail)
	}
	return r, nil
}

func (s *Service) flagged(provider, ref, why string) {
	s.log().Error("transaction flagged: its provider's amount differs from ours; left unsettled for an operator",
		"provider", provider, "reference", ref, "flag", why)
	s.Metrics.Flagged(provider)
}

// cut shortens s to at most n characters.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
