package withdrawals

import (
	"context"
	"fmt"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/events"
	"merchantpay/internal/jobs"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// Succeed records that the rails paid withdrawal t, leased by owner, in one
// database transaction: status success with settlement_date and settled_at
// (the rails' time), the settling posting (amount_charged leaves
// PayoutsInFlight: amount_settled to RailsClearing, the fee to Fees) and
// withdrawal.success. It reports false, changing nothing, when t is no
// longer pending or its lease passed to another owner. It runs in tx, the
// caller's transaction, or in one of its own when tx is nil.
func (s *Service) Succeed(ctx context.Context, tx *ent.Tx, t *ent.Transaction, owner string, res rails.PayoutResult) (bool, error) {
	done, err := s.succeedAll(ctx, tx, owner, []paid{{t: t, res: res}})
	return len(done) == 1, err
}

// paid is a claimed payout the rails say they paid.
type paid struct {
	t   *ent.Transaction
	res rails.PayoutResult
}

// succeedAll records successes as Succeed records one, all in tx (or in a
// transaction of its own when tx is nil): a conditional update of each
// withdrawal (still pending, still owner's), then, for those it moved, their
// withdrawal.success events in one insert and their settling postings in
// one. It returns the withdrawals it moved, as they now are.
func (s *Service) succeedAll(ctx context.Context, tx *ent.Tx, owner string, ps []paid) ([]*ent.Transaction, error) {
	for _, p := range ps {
		if p.t.Type != Type {
			return nil, fmt.Errorf("withdrawals: %s is not a withdrawal", p.t.Reference)
		}
	}
	if _, scoped := tenant.From(ctx); !scoped {
		ctx = tenant.System(ctx) // a worker's batch spans merchants; each row names its own
	}
	var done []*ent.Transaction
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		done = done[:0]
		c := tx.Client()
		now := s.clock.Now()
		at := make([]time.Time, len(ps))
		for i, p := range ps {
			at[i] = p.res.SettledAt.UTC().Truncate(time.Millisecond) // as stored
			if p.res.SettledAt.IsZero() {
				at[i] = now
			}
		}
		moved, err := s.settle(ctx, c, owner, now, ps, at)
		if err != nil {
			return err
		}
		postings := make([]ledger.Posting, 0, len(ps))
		for i, p := range ps {
			if !moved[p.t.ID] {
				continue // finished already, or no longer ours
			}
			// The row as the update left it, without reading it back: the
			// claim read it under this lease, and only the lease holder
			// changes a pending withdrawal.
			t := *p.t
			t.UpdatedAt, t.NextRunAt, t.LeaseOwner, t.LeaseUntil = now, nil, nil, nil
			t.Status, t.SettlementDate, t.SettledAt = StatusSuccess, &at[i], &at[i]
			if ref := p.res.RailsReference; ref != "" {
				t.RailsReference = &ref
			}
			done = append(done, &t)
			postings = append(postings, settlePosting(&t))
		}
		if len(done) == 0 {
			return nil
		}
		if err := s.outbox.EmitAll(ctx, tx, events.WithdrawalSuccess, done); err != nil {
			return err
		}
		_, err = s.ledger.PostAll(ctx, tx, postings)
		return err
	})
	if err != nil {
		return nil, err
	}
	return done, nil
}

// settle moves the withdrawals of ps still pending and leased to owner to
// success, settled at at, and returns the ids it moved: one statement on
// PostgreSQL (see settleRows), one conditional update each on SQLite.
func (s *Service) settle(ctx context.Context, c *ent.Client, owner string, now time.Time, ps []paid, at []time.Time) (map[string]bool, error) {
	if s.db.IsPostgres() {
		ids, ats, refs := make([]string, len(ps)), make([]string, len(ps)), make([]string, len(ps))
		for i, p := range ps {
			ids[i], ats[i], refs[i] = p.t.ID, store.PGTime(at[i]), p.res.RailsReference
		}
		return settleRows(ctx, c, owner, now, ids, ats, refs)
	}
	moved := make(map[string]bool, len(ps))
	for i, p := range ps {
		u := mine(c, p.t, owner).
			SetUpdatedAt(now).ClearNextRunAt().ClearLeaseOwner().ClearLeaseUntil().
			SetStatus(StatusSuccess).SetSettlementDate(at[i]).SetSettledAt(at[i])
		if p.res.RailsReference != "" {
			u.SetRailsReference(p.res.RailsReference)
		}
		n, err := u.Save(ctx)
		if err != nil {
			return nil, err
		}
		moved[p.t.ID] = n == 1
	}
	return moved, nil
}

// settlePosting completes successful payout t: amount_charged leaves
// PayoutsInFlight, amount_settled for RailsClearing and the fee for Fees.
func settlePosting(t *ent.Transaction) ledger.Posting {
	cur := money.Currency(t.Currency)
	entries := []ledger.Entry{
		{Account: ledger.SystemAccount(t.Mode, cur, ledger.PayoutsInFlight), Amount: -t.AmountCharged},
		{Account: ledger.SystemAccount(t.Mode, cur, ledger.RailsClearing), Amount: t.AmountSettled},
	}
	if fee := t.AmountCharged - t.AmountSettled; fee > 0 {
		entries = append(entries, ledger.Entry{Account: ledger.SystemAccount(t.Mode, cur, ledger.Fees), Amount: fee})
	}
	return ledger.Posting{ID: SettlePostingID(t.Reference), TransactionRef: t.Reference,
		Memo: "payout of " + t.Reference, Entries: entries}
}

// Fail records that the rails refused withdrawal t, leased by owner, in one
// database transaction: status failed with reject_reason, the reversal of
// its debit (the merchant gets back exactly what was taken, in the currency
// it was taken in) and withdrawal.failed. It reports false, changing
// nothing, when t is no longer pending or its lease passed to another owner.
// It runs in tx, the caller's transaction, or in one of its own when tx is
// nil.
func (s *Service) Fail(ctx context.Context, tx *ent.Tx, t *ent.Transaction, owner string, res rails.PayoutResult) (bool, error) {
	reason := res.Reason
	if reason == "" {
		reason = "the payout was rejected by the beneficiary's bank"
	}
	set := func(u *ent.TransactionUpdateOne, _ time.Time) { u.SetStatus(StatusFailed).SetRejectReason(reason) }
	return s.finish(ctx, tx, t, owner, res, set, func(ctx context.Context, tx *ent.Tx, done *ent.Transaction) error {
		if err := s.outbox.Emit(ctx, tx, events.WithdrawalFailed, done); err != nil {
			return err
		}
		_, err := s.ledger.Reverse(ctx, tx, DebitPostingID(done.Reference), "payout of "+done.Reference+" failed")
		return err
	})
}

// finish moves t out of pending in one database transaction (tx, or one of
// its own when tx is nil): the conditional update from pending under
// owner's lease (set adds the new state), then after's postings and event.
func (s *Service) finish(ctx context.Context, tx *ent.Tx, t *ent.Transaction, owner string, res rails.PayoutResult,
	set func(u *ent.TransactionUpdateOne, now time.Time), after func(ctx context.Context, tx *ent.Tx, done *ent.Transaction) error) (bool, error) {
	if t.Type != Type {
		return false, fmt.Errorf("withdrawals: %s is not a withdrawal", t.Reference)
	}
	ctx = tenant.With(ctx, tenant.Tenant{MerchantID: t.MerchantID, Mode: t.Mode})
	done := false
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		now := s.clock.Now()
		u := tx.Client().Transaction.UpdateOneID(t.ID).
			Where(transaction.Status(StatusPending), jobs.Mine(owner)).
			SetUpdatedAt(now).ClearNextRunAt().ClearLeaseOwner().ClearLeaseUntil()
		if res.RailsReference != "" {
			u.SetRailsReference(res.RailsReference)
		}
		set(u, now)
		row, err := u.Save(ctx)
		if ent.IsNotFound(err) {
			return nil // finished already, or no longer ours
		}
		if err != nil {
			return err
		}
		if err := after(ctx, tx, row); err != nil {
			return err
		}
		done = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return done, nil
}
