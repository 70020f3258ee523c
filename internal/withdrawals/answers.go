package withdrawals

import (
	"context"
	"fmt"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/jobs"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// This file holds what the rails answered about claimed payouts and how the
// payout worker records it: pending and settled answers in batches, each
// failure in a transaction of its own, and a backoff after an error of the
// rails. Succeed, Fail and the settlement postings are in outcome.go.

// Retry backoff after an error of the rails: doubling from retryBase, at
// most retryMax.
const (
	retryBase = 5 * time.Second
	retryMax  = 5 * time.Minute
)

// recordWithin bounds how long the rails' answers wait to be recorded while
// the rest of a batch is sent: the sandbox answers at once, so one pass is
// recorded in one transaction, but slow rails must not hold answers until
// the leases run out.
const recordWithin = time.Second

// recordAll records answers, pending and settled ones in one database
// transaction (see jobs.InBatchAll: should it fail, each is recorded on its
// own), and returns the failures. A failed payout is recorded in a
// transaction of its own: reversing its debit locks the merchant's balance
// row, which one batch must not hold for many merchants at once (their
// withdrawals would wait for the batch, and two transactions taking the
// same rows in another order could deadlock).
func (p *Payouts) recordAll(ctx context.Context, answers []answer) []error {
	// Recording runs on after a shutdown began, so that answers already
	// given by the rails (a submission above all) are kept.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jobTimeout)
	defer cancel()
	var batch, alone []answer
	for _, a := range answers {
		if a.reverses() {
			alone = append(alone, a)
		} else {
			batch = append(batch, a)
		}
	}
	var errs []error
	report := func(a answer, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("payouts: %s: %w", a.t.Reference, err))
		}
	}
	for i, err := range jobs.InBatchAll(rctx, p.s.db, batch, p.recordBatch) {
		report(batch[i], err)
		if err == nil && batch[i].err == nil && batch[i].mismatch == "" && batch[i].res.Status == rails.PayoutSucceeded {
			p.completed(StatusSuccess)
		}
	}
	for _, a := range alone {
		err := p.s.db.Within(rctx, nil, func(ctx context.Context, tx *ent.Tx) error { return p.record(ctx, tx, a) })
		report(a, err)
		if err == nil {
			p.completed(StatusFailed)
		}
	}
	return errs
}

func (p *Payouts) completed(status string) {
	if p.opt.Completed != nil {
		p.opt.Completed(status)
	}
}

// answer is what the rails said about one claimed payout, to be recorded.
type answer struct {
	t   *ent.Transaction
	res rails.PayoutResult
	// submittedAt is set when this step submitted the payout.
	submittedAt *time.Time
	// err is a failure of the rails (or a status they should not answer):
	// the payout is tried again after a backoff.
	err error
	// provider carried the payout; live is true for a real provider.
	provider string
	live     bool
	// mismatch, when not empty, says how the provider's amount differs
	// from ours: the payout is flagged, not settled.
	mismatch string
}

// reverses reports whether recording a reverses the merchant's debit.
func (a answer) reverses() bool {
	return a.err == nil && a.mismatch == "" && a.res.Status == rails.PayoutFailed
}

// recordBatch records answers that reverse nothing in tx: the payouts still pending together (see pendingAll), the
// successes together (see succeedAll), every other answer with its own
// update.
func (p *Payouts) recordBatch(ctx context.Context, tx *ent.Tx, answers []answer) error {
	var paidOut []paid
	var waiting []answer
	for _, a := range answers {
		switch {
		case a.err == nil && a.mismatch == "" && a.res.Status == rails.PayoutSucceeded:
			paidOut = append(paidOut, paid{t: a.t, res: a.res})
		case a.err == nil && a.res.Status == rails.PayoutPending:
			waiting = append(waiting, a)
		default:
			if err := p.record(ctx, tx, a); err != nil {
				return err
			}
		}
	}
	if err := p.pendingAll(ctx, tx, waiting); err != nil {
		return err
	}
	if len(paidOut) == 0 {
		return nil
	}
	_, err := p.s.succeedAll(ctx, tx, p.opt.Owner, paidOut)
	return err
}

// pendingAll records the answers of payouts the rails still hold (see
// pending): one statement on PostgreSQL (see pendingRows), one conditional
// update each on SQLite; in tx.
func (p *Payouts) pendingAll(ctx context.Context, tx *ent.Tx, waiting []answer) error {
	if len(waiting) == 0 {
		return nil
	}
	if !p.s.db.IsPostgres() {
		for _, a := range waiting {
			if err := p.pending(ctx, tx, a); err != nil {
				return err
			}
		}
		return nil
	}
	now := p.s.clock.Now()
	n := len(waiting)
	ids, next, refs, submitted := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, a := range waiting {
		ids[i], next[i], refs[i] = a.t.ID, store.PGTime(p.nextCheck(a, now)), a.res.RailsReference
		if a.submittedAt != nil {
			submitted[i] = store.PGTime(*a.submittedAt)
		}
	}
	return pendingRows(ctx, tx.Client(), p.opt.Owner, now, ids, next, refs, submitted)
}

// record moves the payout on by the rails' answer, in tx.
func (p *Payouts) record(ctx context.Context, tx *ent.Tx, a answer) error {
	if a.err != nil {
		return p.retry(ctx, tx, a.t)
	}
	if a.mismatch != "" {
		return p.flag(ctx, tx, a)
	}
	var err error
	switch a.res.Status {
	case rails.PayoutPending:
		err = p.pending(ctx, tx, a)
	case rails.PayoutSucceeded:
		_, err = p.s.Succeed(ctx, tx, a.t, p.opt.Owner, a.res)
	case rails.PayoutFailed:
		_, err = p.s.Fail(ctx, tx, a.t, p.opt.Owner, a.res)
	}
	return err
}

// mine narrows an update to t while it is pending and leased to owner.
func mine(c *ent.Client, t *ent.Transaction, owner string) *ent.TransactionUpdate {
	return c.Transaction.Update().Where(transaction.ID(t.ID), transaction.Status(StatusPending), jobs.Mine(owner))
}

// pending records that the rails still hold the payout: look again at
// res.NextCheck, and remember the submission; in tx.
func (p *Payouts) pending(ctx context.Context, tx *ent.Tx, a answer) error {
	ctx = tenant.System(ctx)
	t, res := a.t, a.res
	now := p.s.clock.Now()
	u := mine(tx.Client(), t, p.opt.Owner).
		SetNextRunAt(p.nextCheck(a, now)).ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(now)
	if res.RailsReference != "" {
		u.SetRailsReference(res.RailsReference)
	}
	if a.submittedAt != nil {
		u.SetSubmittedAt(*a.submittedAt)
	}
	_, err := u.Save(ctx) // no row: no longer ours, and the new owner records
	return err
}

// nextCheck is when to ask the rails again about a payout they still hold:
// when the sandbox says; for a live provider, whose webhook normally tells
// the outcome first, after ReconcileAfter (the reconciling look-up).
func (p *Payouts) nextCheck(a answer, now time.Time) time.Time {
	if a.live {
		return now.Add(p.opt.ReconcileAfter)
	}
	if a.res.NextCheck.After(now) {
		return a.res.NextCheck
	}
	return now.Add(p.opt.Recheck)
}

// retry gives the payout back after an error of the rails, to be tried
// again after a backoff; in tx.
func (p *Payouts) retry(ctx context.Context, tx *ent.Tx, t *ent.Transaction) error {
	ctx = tenant.System(ctx)
	now := p.s.clock.Now()
	wait := retryBase << min(t.Attempts, 10)
	if wait > retryMax {
		wait = retryMax
	}
	_, err := mine(tx.Client(), t, p.opt.Owner).
		SetNextRunAt(now.Add(wait)).AddAttempts(1).ClearLeaseOwner().ClearLeaseUntil().Save(ctx)
	return err
}
