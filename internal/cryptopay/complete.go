package cryptopay

import (
	"context"
	"fmt"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/predicate"
	"merchantpay/ent/transaction"
	"merchantpay/internal/apperr"
	"merchantpay/internal/events"
	"merchantpay/internal/jobs"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/present/jsonx"
)

// RejectCancelled is the reject_reason of a checkout the payer cancelled.
const RejectCancelled = "the payer cancelled the crypto-pay checkout"

// rejectExpiredPrefix starts the reject_reason of an expired checkout.
const rejectExpiredPrefix = "the crypto-pay checkout expired"

func rejectExpired(at time.Time) string {
	return rejectExpiredPrefix + " at " + jsonx.Time(at) + " before it was paid"
}

// ValidateOutcome names a bad outcome.
func ValidateOutcome(outcome *string, f *apperr.Fields) {
	switch {
	case outcome == nil:
		f.Add("outcome", "is required: success or failed")
	case *outcome != OutcomeSuccess && *outcome != OutcomeFailed:
		f.Add("outcome", "must be success or failed")
	}
}

// Complete ends the pending checkout prepayID with outcome (success or
// failed), as the hosted page's Pay and Cancel buttons, the sandbox endpoint
// and GraphQL completeCryptoPay do, in one database transaction (joining the
// one in ctx): the conditional update from pending, the event, and on
// success the ledger credit.
//
// ctx acting for a tenant sees only that tenant's checkouts (any other is
// NOT_FOUND); ctx marked tenant.System (the hosted page, whose prepay id is
// its credential) sees every one. A test-mode tenant is refused with
// LIVE_MODE_ONLY, as for every crypto-pay call.
//
// In a mode where the simulations are not offered, Complete is NOT_FOUND,
// as an unknown route: a real provider, not the sandbox, completes
// checkouts there.
//
// A checkout past its expireTime cannot be paid: completing it, whatever the
// outcome, fails it as expired (as the worker would a moment later) and
// returns the failed transaction. A checkout no longer pending is refused
// with 409 DUPLICATE_REFERENCE: a checkout is paid at most once, so nothing
// is credited twice.
//
// It runs in tx, the request's transaction handed to it, or, when tx is nil
// (tests), in one of its own.
func (s *Service) Complete(ctx context.Context, tx *ent.Tx, prepayID, outcome string) (*ent.Transaction, error) {
	var f apperr.Fields
	ValidateOutcome(&outcome, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	_, scoped, err := tenant.Scope(ctx)
	if err != nil {
		return nil, err
	}
	if scoped {
		if err := s.cfg.Simulations.CheckTenant(ctx); err != nil {
			return nil, err
		}
		if _, err := liveTenant(ctx); err != nil {
			return nil, err
		}
	}
	var out *ent.Transaction
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		t, err := s.find(ctx, tx.Client(), prepayID)
		if err != nil {
			return err
		}
		if err := s.cfg.Simulations.Check(t.Mode); err != nil {
			return err
		}
		ctx = tenant.With(ctx, tenantOf(t))
		if t.Status != StatusPending {
			return alreadyCompleted(t)
		}
		now := s.clock.Now()
		reason := ""
		switch {
		case expired(t, now):
			reason = rejectExpired(*t.ExpiresAt)
		case outcome == OutcomeFailed:
			reason = RejectCancelled
		}
		done, err := s.finish(ctx, tx, t, reason, now)
		if err != nil {
			return err
		}
		if done == nil {
			// Completed by another request or the worker since we read it.
			latest, err := tx.Client().Transaction.Get(ctx, t.ID)
			if err != nil {
				return err
			}
			return alreadyCompleted(latest)
		}
		out = done
		return nil
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return out, nil
}

// find reads the crypto-pay deposit of a prepay id visible to ctx, with c.
func (s *Service) find(ctx context.Context, c *ent.Client, prepayID string) (*ent.Transaction, error) {
	if !validPrepayID(prepayID) {
		return nil, notFound(prepayID)
	}
	t, err := c.Transaction.Query().
		Where(transaction.PrepayID(prepayID), transaction.PaymentSlug(PaymentSlug)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, notFound(prepayID)
	}
	return t, err
}

func notFound(prepayID string) error {
	return apperr.New(apperr.NotFound, "no crypto-pay checkout with prepayId %q", prepayID)
}

func alreadyCompleted(t *ent.Transaction) error {
	return apperr.New(apperr.DuplicateReference,
		"the crypto-pay checkout %s (transaction %s) is already %s; a checkout completes only once",
		deref(t.PrepayID), t.Reference, t.Status)
}

// finish moves t from pending to success (reason empty) or failed (reason
// set), with its event and, on success, its credit; extra narrows the
// conditional update (the worker's lease). It returns nil, changing
// nothing, when t is no longer pending (or the update's extra condition
// failed). It writes in tx, the caller's transaction.
func (s *Service) finish(ctx context.Context, tx *ent.Tx, t *ent.Transaction, reason string, now time.Time, extra ...func(*ent.TransactionUpdateOne)) (*ent.Transaction, error) {
	upd := tx.Client().Transaction.UpdateOneID(t.ID).Where(transaction.Status(StatusPending)).
		SetUpdatedAt(now).ClearNextRunAt().ClearLeaseOwner().ClearLeaseUntil()
	for _, x := range extra {
		x(upd)
	}
	if reason == "" {
		upd.SetStatus(StatusSuccess).SetSettledAt(now).SetSettlementDate(now)
	} else {
		upd.SetStatus(StatusFailed).SetRejectReason(reason)
	}
	done, err := upd.Save(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := s.outbox.Emit(ctx, tx, eventType(done), done); err != nil {
		return nil, err
	}
	if done.Status == StatusSuccess {
		// Last: the credit locks the merchant's balance row until the commit.
		if err := s.credit(ctx, tx, done); err != nil {
			return nil, err
		}
	}
	return done, nil
}

// eventType is the event of t's current status: deposit.* for a direct
// deposit, swap.* for a cross one, the names integrations already expect.
func eventType(t *ent.Transaction) string {
	cross := t.ToAmount != nil
	switch {
	case t.Status == StatusSuccess && cross:
		return events.SwapSuccess
	case t.Status == StatusSuccess:
		return events.DepositSuccess
	case t.Status == StatusFailed && cross:
		return events.SwapFailed
	case t.Status == StatusFailed:
		return events.DepositFailed
	case cross:
		return events.SwapPending
	}
	return events.DepositPending
}

// credit posts a paid deposit. Direct: the rails clearing account gives
// amount_charged; the merchant gets amount_settled and the fees account the
// fee. Cross: the payer's from_amount arrives in from_currency and goes to
// the FX account, which gives to_amount + fee in to_currency: to_amount to
// the merchant and the fee to the fees account. The posting id derives from
// the reference, so it can never be posted twice. It posts in tx, the
// caller's transaction.
func (s *Service) credit(ctx context.Context, tx *ent.Tx, t *ent.Transaction) error {
	tn := tenantOf(t)
	cur := money.Currency(t.Currency)
	var entries []ledger.Entry
	if t.ToAmount == nil {
		entries = []ledger.Entry{
			{Account: ledger.SystemAccount(tn.Mode, cur, ledger.RailsClearing), Amount: -t.AmountCharged},
			{Account: ledger.MerchantAccount(tn, cur), Amount: t.AmountSettled},
		}
	} else {
		from := money.Currency(t.FromCurrency)
		entries = []ledger.Entry{
			{Account: ledger.SystemAccount(tn.Mode, from, ledger.RailsClearing), Amount: -t.FromAmount},
			{Account: ledger.SystemAccount(tn.Mode, from, ledger.FX), Amount: t.FromAmount},
			{Account: ledger.SystemAccount(tn.Mode, cur, ledger.FX), Amount: -(t.AmountSettled + t.Fee)},
			{Account: ledger.MerchantAccount(tn, cur), Amount: t.AmountSettled},
		}
	}
	if t.Fee > 0 {
		entries = append(entries, ledger.Entry{Account: ledger.SystemAccount(tn.Mode, cur, ledger.Fees), Amount: t.Fee})
	}
	_, err := s.ledger.Post(ctx, tx, ledger.Posting{ID: t.Reference + ":crypto-pay", TransactionRef: t.Reference,
		Memo: "crypto-pay deposit " + deref(t.PrepayID), Entries: entries})
	return err
}

// ---- Expiry worker ----

// expiry is the worker that fails checkouts at their expireTime.
func (s *Service) expiry() jobs.Worker {
	return jobs.Worker{Name: "crypto-pay expiry", DB: s.db, Now: s.clock.Now,
		Due:    []predicate.Transaction{transaction.Type(Type), transaction.PaymentSlug(PaymentSlug), transaction.Status(StatusPending)},
		Handle: s.Expire}
}

// RunExpiry fails checkouts at their expireTime every opt.Poll until ctx
// ends, on any number of instances (see jobs.Worker).
func (s *Service) RunExpiry(ctx context.Context, opt jobs.WorkerOptions) { s.expiry().Run(ctx, opt) }

// ExpireDue claims up to limit pending crypto-pay checkouts whose expireTime
// has passed (by the injected clock) for owner and fails each in its own
// database transaction.
func (s *Service) ExpireDue(ctx context.Context, owner string, lease time.Duration, limit int) (int, error) {
	return s.expiry().RunDue(ctx, owner, lease, limit)
}

// Expire fails the pending checkout t leased by owner once its expireTime
// has passed: status failed with reject_reason, and deposit.failed or
// swap.failed. It reports false, changing nothing, when t is no longer
// pending, not yet expired, or no longer owner's.
func (s *Service) Expire(ctx context.Context, t *ent.Transaction, owner string) (bool, error) {
	if t.PaymentSlug != PaymentSlug || t.ExpiresAt == nil {
		return false, fmt.Errorf("cryptopay: %s is not a crypto-pay deposit", t.Reference)
	}
	if t.Provider != nil && s.router != nil && expired(t, s.clock.Now()) {
		return s.expireLive(ctx, t, owner)
	}
	ctx = tenant.With(ctx, tenantOf(t))
	ok := false
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		now := s.clock.Now()
		if !expired(t, now) {
			return nil
		}
		done, err := s.finish(ctx, tx, t, rejectExpired(*t.ExpiresAt), now, func(u *ent.TransactionUpdateOne) {
			u.Where(jobs.Mine(owner))
		})
		ok = done != nil
		return err
	})
	if err != nil {
		return false, store.Classify(err)
	}
	return ok, nil
}
