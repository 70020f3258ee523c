package swaps

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"merchantpay/ent"
	"merchantpay/ent/predicate"
	"merchantpay/ent/transaction"
	"merchantpay/internal/events"
	"merchantpay/internal/jobs"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/tenant"
	"merchantpay/internal/tracing"
)

// settlement is the worker that settles due swaps.
func (s *Service) settlement() jobs.Worker {
	return jobs.Worker{Name: "swap settlement", DB: s.db, Now: s.clock.Now,
		Due:    []predicate.Transaction{transaction.Type(Type), transaction.PaymentSlug(PaymentSlug), transaction.Status(StatusPending)},
		Handle: s.Settle}
}

// RunSettlement settles due swaps every opt.Poll until ctx ends, on any
// number of instances (see jobs.Worker).
func (s *Service) RunSettlement(ctx context.Context, opt jobs.WorkerOptions) {
	s.settlement().Run(ctx, opt)
}

// SettleDue claims up to limit pending swaps whose settlement time has come
// (by the injected clock) for owner, and settles each in its own database
// transaction.
func (s *Service) SettleDue(ctx context.Context, owner string, lease time.Duration, limit int) (int, error) {
	return s.settlement().RunDue(ctx, owner, lease, limit)
}

// Settle completes the pending swap t leased by owner, in one database
// transaction: status success with settled_at and settlement_date, the
// swap.success event, and the move of to_amount from the merchant's pending
// to its available balance. It reports false, changing nothing, when t is
// no longer pending or its lease passed to another owner.
func (s *Service) Settle(ctx context.Context, t *ent.Transaction, owner string) (bool, error) {
	if t.Type != Type || t.ToAmount == nil || t.ToCurrency == nil {
		return false, fmt.Errorf("swaps: %s is not a swap", t.Reference)
	}
	tn := tenant.Tenant{MerchantID: t.MerchantID, Mode: t.Mode}
	ctx = tenant.With(ctx, tn)
	if s.cfg.Tracer != nil {
		parent := ""
		if t.TraceParent != nil {
			parent = *t.TraceParent
		}
		var span trace.Span
		ctx, span = s.cfg.Tracer.Start(ctx, "swap settlement", append(tracing.Link(parent),
			trace.WithAttributes(attribute.String("transaction.reference", t.Reference)))...)
		defer span.End()
	}
	settled := false
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		now := s.clock.Now()
		done, err := tx.Client().Transaction.UpdateOneID(t.ID).
			Where(transaction.Status(StatusPending), jobs.Mine(owner)).
			SetStatus(StatusSuccess).SetSettledAt(now).SetSettlementDate(now).SetUpdatedAt(now).
			ClearNextRunAt().ClearLeaseOwner().ClearLeaseUntil().
			Save(ctx)
		if ent.IsNotFound(err) {
			return nil // settled already, or no longer ours
		}
		if err != nil {
			return err
		}
		if err := s.outbox.Emit(ctx, tx, events.SwapSuccess, done); err != nil {
			return err
		}
		cur := money.Currency(*done.ToCurrency)
		if _, err := s.ledger.Move(ctx, tx, ledger.Posting{ID: done.Reference + ":settle", TransactionRef: done.Reference,
			Memo: "settlement of " + done.Reference}, tn, cur, ledger.Pending, ledger.Available, *done.ToAmount); err != nil {
			return err
		}
		settled = true
		return nil
	})
	if err != nil {
		return false, err
	}
	return settled, nil
}
