package withdrawals

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/events"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// This file is the part of payouts that only live providers need: the
// provider's reference stored before submitting, the flag on an amount that
// disagrees with ours, and the outcomes a provider's webhook reports
// (settle, refund, reversal after success).

// noticeLease is how long a webhook's processing holds a payout it took
// from the worker; it commits long before.
const noticeLease = time.Minute

// errNoLongerOurs: the payout's lease passed to another owner before its
// provider was asked; that owner asks.
var errNoLongerOurs = errors.New("the payout's lease passed to another owner")

// mapProvider stores which provider carries t and the reference it knows t
// by, before t is submitted (a look-up by that reference then finds t), and
// renews owner's lease for the whole provider call: a call is bounded by
// jobTimeout, shorter than a lease, so no other instance can claim t and
// submit it at the same time.
func (p *Payouts) mapProvider(ctx context.Context, t *ent.Transaction, provider, ref string) error {
	ctx = tenant.System(ctx)
	var n int
	err := p.s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) (err error) {
		n, err = mine(tx.Client(), t, p.opt.Owner).SetProvider(provider).SetProviderReference(ref).
			SetLeaseUntil(p.s.clock.Now().Add(max(p.opt.Lease, 2*jobTimeout))).Save(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("store the provider's reference: %w", store.Classify(err))
	}
	if n == 0 {
		return errNoLongerOurs
	}
	t.Provider, t.ProviderReference = &provider, &ref
	return nil
}

// providerOf is the provider of payout t (a's), with a.provider and a.live
// set. A live provider's reference is stored before anything is sent, so
// that a webhook finds the payout even if this process dies between
// submitting and recording. A provider configured when the payout was
// accepted and not now sets a.err: the payout waits, with backoff, for the
// operator to restore it.
func (p *Payouts) providerOf(ctx context.Context, a *answer, payout rails.Payout) (rails.PayoutProvider, error) {
	prov, err := p.s.router.Payouts(a.t.Mode, payout.Country)
	if err != nil {
		a.err = err
		return nil, nil
	}
	a.provider = prov.Provider()
	a.live = a.provider != rails.ProviderSandbox
	if a.live {
		if err := p.mapProvider(ctx, a.t, a.provider, p.s.router.ProviderReference(a.provider, a.t.Reference)); err != nil {
			return nil, err
		}
	}
	return prov, nil
}

// looked tells Looked of a look-up of a live payout (the reconciler's).
func (p *Payouts) looked(a answer) {
	if !a.live || p.opt.Looked == nil {
		return
	}
	status := string(a.res.Status)
	if a.err != nil {
		status = "error"
	}
	p.opt.Looked(a.provider, status)
}

// reversedReason is a reversed payout's reason when its provider gives
// none.
const reversedReason = "the payout was reversed by the beneficiary's bank"

// read checks the rails' answer: a status the worker does not know is an
// error; a reversal of a payout we never recorded as paid is its failure
// (the money is back at the provider); a final answer whose amount differs
// from ours is a mismatch, to be flagged.
func (a *answer) read(payout rails.Payout) {
	switch {
	case a.err != nil:
	case a.res.Status == rails.PayoutPending, a.res.Status == rails.PayoutSucceeded, a.res.Status == rails.PayoutFailed:
	case a.res.Status == rails.PayoutReversed:
		a.res.Status = rails.PayoutFailed
		if a.res.Reason == "" {
			a.res.Reason = reversedReason
		}
	default:
		a.err = fmt.Errorf("rails answered status %q", a.res.Status)
	}
	if a.err == nil && a.res.Status != rails.PayoutPending {
		a.mismatch = AmountMismatch(payout.Amount, a.res.ProviderAmount, payout.Currency)
	}
}

// AmountMismatch says how a provider's amount (minor units; 0 when the
// provider did not say) differs from ours, or "" when it does not.
func AmountMismatch(ours, provider int64, cur money.Currency) string {
	if provider == 0 || provider == ours {
		return ""
	}
	return fmt.Sprintf("amount mismatch: the provider reports %s %s, the transaction is for %s %s",
		money.Format(provider, cur), cur, money.Format(ours, cur), cur)
}

// flag leaves the payout unsettled with its mismatch recorded for an
// operator; the worker no longer looks at it. It writes in tx, the caller's
// transaction.
func (p *Payouts) flag(ctx context.Context, tx *ent.Tx, a answer) error {
	ctx = tenant.System(ctx)
	_, err := mine(tx.Client(), a.t, p.opt.Owner).SetRailsFlag(a.mismatch).
		ClearNextRunAt().ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(p.s.clock.Now()).Save(ctx)
	if err != nil {
		return err
	}
	p.flagged(a.t, a.provider, a.mismatch)
	return nil
}

func (p *Payouts) flagged(t *ent.Transaction, provider, mismatch string) {
	log := p.opt.Log
	if log == nil {
		log = slog.Default()
	}
	log.Error("payout flagged: its provider's amount differs from ours; left unsettled for an operator",
		"reference", t.Reference, "provider", provider, "flag", mismatch)
	if p.opt.Flagged != nil {
		p.opt.Flagged(provider)
	}
}

// ByProviderReference finds the transaction a live provider knows by ref,
// whatever its tenant; nil when there is none. It reads in tx, the caller's
// transaction, or outside any when tx is nil.
func (s *Service) ByProviderReference(ctx context.Context, tx *ent.Tx, ref string) (*ent.Transaction, error) {
	t, err := s.db.ClientOf(tx).Transaction.Query().Where(transaction.ProviderReference(ref)).Only(tenant.System(ctx))
	if ent.IsNotFound(err) {
		return nil, nil
	}
	return t, store.Classify(err)
}

// Outcomes of a payout notice, as recorded with it.
const (
	NoticeApplied = "applied"
	NoticeIgnored = "ignored"
	NoticeFlagged = "flagged"
)

// ApplyNotice moves withdrawal t on by a provider's webhook, in tx, the
// transaction of the notice's record: success settles it as the worker would,
// failure refunds it, a reversal refunds it whether or not it had settled.
// The webhook takes the payout from the worker if the worker holds it (the
// worker's own recording then changes nothing). It returns what it did and,
// for NoticeFlagged, why.
func (s *Service) ApplyNotice(ctx context.Context, tx *ent.Tx, t *ent.Transaction, n rails.PayoutNotice, owner string) (string, string, error) {
	if t.Type != Type {
		return NoticeIgnored, "not a withdrawal", nil
	}
	if t.RailsFlag != nil {
		return NoticeIgnored, "the withdrawal is flagged for an operator", nil
	}
	if n.Status != rails.PayoutPending {
		if m := AmountMismatch(t.AmountSettled, n.Amount, money.Currency(t.Currency)); m != "" ||
			(n.Currency != "" && string(n.Currency) != t.Currency) {
			if m == "" {
				m = fmt.Sprintf("currency mismatch: the provider reports %s, the transaction is in %s", n.Currency, t.Currency)
			}
			return NoticeFlagged, m, s.flagRow(ctx, tx, t, m)
		}
	}
	res := rails.PayoutResult{Status: n.Status, Reason: n.Reason, SettledAt: n.At, ProviderAmount: n.Amount}
	switch {
	case n.Status == rails.PayoutSucceeded && t.Status == StatusPending:
		if err := s.take(ctx, tx, t, owner); err != nil {
			return "", "", err
		}
		ok, err := s.Succeed(ctx, tx, t, owner, res)
		return applied(ok), "", err
	case (n.Status == rails.PayoutFailed || n.Status == rails.PayoutReversed) && t.Status == StatusPending:
		if err := s.take(ctx, tx, t, owner); err != nil {
			return "", "", err
		}
		if res.Reason == "" && n.Status == rails.PayoutReversed {
			res.Reason = reversedReason
		}
		ok, err := s.Fail(ctx, tx, t, owner, res)
		return applied(ok), "", err
	case n.Status == rails.PayoutReversed && t.Status == StatusSuccess:
		ok, err := s.ReverseSettled(ctx, tx, t, n.Reason)
		return applied(ok), "", err
	}
	return NoticeIgnored, fmt.Sprintf("a %s notice for a %s withdrawal", n.Status, t.Status), nil
}

func applied(ok bool) string {
	if ok {
		return NoticeApplied
	}
	return NoticeIgnored
}

// take gives the pending withdrawal t to owner, whoever held it: a
// provider's word on the outcome outranks the worker's step in progress.
// It writes in tx, the caller's transaction.
func (s *Service) take(ctx context.Context, tx *ent.Tx, t *ent.Transaction, owner string) error {
	now := s.clock.Now()
	_, err := tx.Client().Transaction.Update().
		Where(transaction.ID(t.ID), transaction.Status(StatusPending)).
		SetLeaseOwner(owner).SetLeaseUntil(now.Add(noticeLease)).Save(tenant.System(ctx))
	return store.Classify(err)
}

// flagRow records a mismatch on t, in tx, and takes it out of the worker's
// hands.
func (s *Service) flagRow(ctx context.Context, tx *ent.Tx, t *ent.Transaction, why string) error {
	u := tx.Client().Transaction.UpdateOneID(t.ID).SetRailsFlag(why).SetUpdatedAt(s.clock.Now())
	if t.Status == StatusPending {
		u.ClearNextRunAt().ClearLeaseOwner().ClearLeaseUntil()
	}
	return store.Classify(u.Exec(tenant.System(ctx)))
}

// ReverseSettled records that a provider returned the money of withdrawal
// t after it settled, in one database transaction: status failed with the
// reason, the reversal of its settling posting and of its debit (so the
// merchant gets back exactly what was taken, and every system account is
// as if the payout never happened) and withdrawal.failed. It reports false,
// changing nothing, when t is no longer a success. It runs in tx, the
// caller's transaction, or in one of its own when tx is nil.
func (s *Service) ReverseSettled(ctx context.Context, tx *ent.Tx, t *ent.Transaction, reason string) (bool, error) {
	if reason == "" {
		reason = "the payout was reversed by the beneficiary's bank after it was paid"
	}
	ctx = tenant.With(ctx, tenant.Tenant{MerchantID: t.MerchantID, Mode: t.Mode})
	done := false
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		row, err := tx.Client().Transaction.UpdateOneID(t.ID).Where(transaction.Status(StatusSuccess)).
			SetStatus(StatusFailed).SetRejectReason(reason).SetUpdatedAt(s.clock.Now()).Save(ctx)
		if ent.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		memo := "payout of " + row.Reference + " reversed"
		if _, err := s.ledger.Reverse(ctx, tx, SettlePostingID(row.Reference), memo); err != nil {
			return err
		}
		if _, err := s.ledger.Reverse(ctx, tx, DebitPostingID(row.Reference), memo); err != nil {
			return err
		}
		if err := s.outbox.Emit(ctx, tx, events.WithdrawalFailed, row); err != nil {
			return err
		}
		done = true
		return nil
	})
	return done, err
}
