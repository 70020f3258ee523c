// Package jobs claims background work on transactions (payout submission and
// settlement, swap settlement, crypto-pay expiry) so that any number of
// instances cooperate without processing one job twice at the same time: a
// row is due when its next_run_at has passed, and a worker leases it
// (lease_owner, lease_until) before working on it. On PostgreSQL candidates
// are picked with FOR UPDATE SKIP LOCKED; on SQLite (one writer) with a
// conditional update. A crashed worker's lease simply expires.
package jobs

import (
	"context"
	"os"
	"strconv"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/predicate"
	"merchantpay/ent/transaction"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// Owner names this process in leases.
func Owner() string {
	host, _ := os.Hostname()
	return host + ":" + strconv.Itoa(os.Getpid()) + ":" + uuid.NewString()[:8]
}

// Claim leases up to limit due transactions matching preds for owner until
// now+lease and returns them. Work on a claimed row must finish with a
// conditional update that also checks lease_owner (see Mine).
func Claim(ctx context.Context, db *store.DB, owner string, now time.Time, lease time.Duration, limit int, preds ...predicate.Transaction) ([]*ent.Transaction, error) {
	ctx = tenant.System(ctx)
	due := append([]predicate.Transaction{
		transaction.NextRunAtNotNil(),
		transaction.NextRunAtLTE(now),
		transaction.Or(transaction.LeaseUntilIsNil(), transaction.LeaseUntilLT(now)),
	}, preds...)
	var claimed []*ent.Transaction
	err := db.Tx(ctx, func(ctx context.Context) error {
		c := db.Client(ctx)
		q := c.Transaction.Query().Where(due...).Order(ent.Asc(transaction.FieldNextRunAt)).Limit(limit)
		if db.IsPostgres() {
			q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
		}
		ids, err := q.IDs(ctx)
		if err != nil || len(ids) == 0 {
			return err
		}
		until := now.Add(lease)
		for _, id := range ids {
			n, err := c.Transaction.Update().Where(append([]predicate.Transaction{transaction.ID(id)}, due...)...).
				SetLeaseOwner(owner).SetLeaseUntil(until).Save(ctx)
			if err != nil {
				return err
			}
			if n == 0 {
				continue // taken meanwhile
			}
		}
		claimed, err = c.Transaction.Query().Where(transaction.IDIn(ids...), transaction.LeaseOwner(owner)).All(ctx)
		return err
	})
	return claimed, store.Classify(err)
}

// Mine is the predicate a worker's finishing update must include, so that a
// worker whose lease expired cannot overwrite another's work.
func Mine(owner string) predicate.Transaction { return transaction.LeaseOwner(owner) }

// Loop runs fn at every tick and whenever wake fires, until ctx ends.
func Loop(ctx context.Context, every time.Duration, wake <-chan struct{}, fn func(ctx context.Context)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		fn(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}

// Waker is a non-blocking signal to a Loop.
type Waker chan struct{}

// NewWaker returns a waker.
func NewWaker() Waker { return make(Waker, 1) }

// Wake signals the loop without blocking.
func (w Waker) Wake() {
	select {
	case w <- struct{}{}:
	default:
	}
}
