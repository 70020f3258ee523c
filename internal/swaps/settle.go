package swaps

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/events"
	"merchantpay/internal/jobs"
	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
	"merchantpay/internal/tenant"
)

// WorkerOptions tune the settlement worker. Zero values take the defaults.
type WorkerOptions struct {
	// Owner names this instance in leases; default jobs.Owner().
	Owner string
	// Poll is how often due swaps are looked for; default 1s.
	Poll time.Duration
	// Lease is how long a claimed swap is reserved (by the injected clock)
	// before another instance may take it over; default 1m.
	Lease time.Duration
	// Batch is the most swaps claimed at once; default 100.
	Batch int
	// Log receives failures; default slog.Default().
	Log *slog.Logger
}

func (o WorkerOptions) withDefaults() WorkerOptions {
	if o.Owner == "" {
		o.Owner = jobs.Owner()
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Lease <= 0 {
		o.Lease = time.Minute
	}
	if o.Batch <= 0 {
		o.Batch = 100
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return o
}

// jobTimeout bounds one settlement, which runs on after a shutdown began so
// that SIGTERM drains the work in hand instead of abandoning it to the lease.
const jobTimeout = 30 * time.Second

// RunSettlement settles due swaps every opt.Poll until ctx ends. Any number
// of instances may run it on one database: each swap is leased to one of
// them, and the settling update is conditional on the lease and on the
// pending status, so none is settled twice. It keeps no state between
// passes, so a restart loses nothing.
func (s *Service) RunSettlement(ctx context.Context, opt WorkerOptions) {
	opt = opt.withDefaults()
	jobs.Loop(ctx, opt.Poll, nil, func(ctx context.Context) {
		for ctx.Err() == nil {
			claimed, err := s.SettleDue(ctx, opt.Owner, opt.Lease, opt.Batch)
			if err != nil && ctx.Err() == nil {
				opt.Log.Error("swap settlement failed", "err", err)
			}
			if claimed < opt.Batch {
				return
			}
		}
	})
}

// SettleDue claims up to limit pending swaps whose settlement time has come
// (by the injected clock) for owner, and settles each in its own database
// transaction. It returns how many it claimed, and the failures joined; a
// swap that failed stays pending and is retried once its lease expires.
func (s *Service) SettleDue(ctx context.Context, owner string, lease time.Duration, limit int) (int, error) {
	due, err := jobs.Claim(ctx, s.db, owner, s.clock.Now(), lease, limit,
		transaction.Type(Type), transaction.PaymentSlug(PaymentSlug), transaction.Status(StatusPending))
	if err != nil {
		return 0, fmt.Errorf("swaps: claim: %w", err)
	}
	var errs []error
	for _, t := range due {
		if ctx.Err() != nil {
			break // the rest go back to the pool when their lease expires
		}
		jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jobTimeout)
		_, err := s.Settle(jctx, t, owner)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("swaps: settle %s: %w", t.Reference, err))
		}
	}
	return len(due), errors.Join(errs...)
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
	settled := false
	err := s.db.Tx(ctx, func(ctx context.Context) error {
		now := s.clock.Now()
		done, err := s.db.Client(ctx).Transaction.UpdateOneID(t.ID).
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
		if _, err := s.outbox.Emit(ctx, events.SwapSuccess, done); err != nil {
			return err
		}
		cur := money.Currency(*done.ToCurrency)
		if _, err := s.ledger.Move(ctx, ledger.Posting{ID: done.Reference + ":settle", TransactionRef: done.Reference,
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
