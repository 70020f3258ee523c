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
	"errors"
	"fmt"
	"log/slog"
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

// leaser describes one table's due rows to lease.
type leaser struct {
	// Candidates returns the ids of at most limit due rows, locked with FOR
	// UPDATE SKIP LOCKED when lock is true.
	Candidates func(ctx context.Context, c *ent.Client, lock bool) ([]string, error)
	// LeaseAll leases rows Candidates locked (PostgreSQL).
	LeaseAll func(ctx context.Context, c *ent.Client, ids []string) error
	// LeaseOne leases one row only if it is still due, reporting whether it
	// did (SQLite, which has no row locks).
	LeaseOne func(ctx context.Context, c *ent.Client, id string) (bool, error)
}

// lease claims due rows in one transaction and returns the ids now leased:
// on PostgreSQL the candidates are picked with SKIP LOCKED and leased with
// one update; on SQLite (one writer) each lease is a conditional update
// checked by rows affected. Webhook deliveries, e-mails and jobs on
// transactions all claim this way.
func lease(ctx context.Context, db *store.DB, l leaser) ([]string, error) {
	var leased []string
	err := db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		ids, err := l.Candidates(ctx, c, db.IsPostgres())
		if err != nil || len(ids) == 0 {
			return err
		}
		if db.IsPostgres() {
			leased = ids
			return l.LeaseAll(ctx, c, ids)
		}
		for _, id := range ids {
			ok, err := l.LeaseOne(ctx, c, id)
			if err != nil {
				return err
			}
			if ok {
				leased = append(leased, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return leased, nil
}

// Claim leases up to limit due transactions matching preds for owner until
// now+lease and returns them (read in the claiming transaction, see
// LeaseRows) with the lease set. Work on a claimed row must finish with a
// conditional update that also checks lease_owner (see Mine).
func Claim(ctx context.Context, db *store.DB, owner string, now time.Time, lease time.Duration, limit int, preds ...predicate.Transaction) ([]*ent.Transaction, error) {
	ctx = tenant.System(ctx)
	due := append([]predicate.Transaction{
		transaction.NextRunAtNotNil(),
		transaction.NextRunAtLTE(now),
		transaction.Or(transaction.LeaseUntilIsNil(), transaction.LeaseUntilLT(now)),
	}, preds...)
	until := now.Add(lease)
	claimed, err := LeaseRows(ctx, db, RowLeaser[*ent.Transaction]{
		Candidates: func(ctx context.Context, c *ent.Client, lock bool) ([]*ent.Transaction, error) {
			q := c.Transaction.Query().Where(due...).Order(ent.Asc(transaction.FieldNextRunAt)).Limit(limit)
			if lock {
				q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
			}
			return q.All(ctx)
		},
		ID: func(t *ent.Transaction) string { return t.ID },
		LeaseAll: func(ctx context.Context, c *ent.Client, ids []string) error {
			return c.Transaction.Update().Where(transaction.IDIn(ids...)).
				SetLeaseOwner(owner).SetLeaseUntil(until).Exec(ctx)
		},
		LeaseOne: func(ctx context.Context, c *ent.Client, id string) (bool, error) {
			n, err := c.Transaction.Update().Where(append([]predicate.Transaction{transaction.ID(id)}, due...)...).
				SetLeaseOwner(owner).SetLeaseUntil(until).Save(ctx)
			return n == 1, err
		},
	})
	for _, t := range claimed {
		o, u := owner, until
		t.LeaseOwner, t.LeaseUntil = &o, &u
	}
	return claimed, err
}

// RowLeaser describes one table's due rows to LeaseRows.
type RowLeaser[T any] struct {
	// Candidates returns at most limit due rows, locked with FOR UPDATE
	// SKIP LOCKED when lock is true.
	Candidates func(ctx context.Context, c *ent.Client, lock bool) ([]T, error)
	// ID is a row's id.
	ID       func(T) string
	LeaseAll func(ctx context.Context, c *ent.Client, ids []string) error
	LeaseOne func(ctx context.Context, c *ent.Client, id string) (bool, error)
}

// LeaseRows claims due rows (see lease) and returns them as Candidates read them,
// inside the claiming transaction (locked on PostgreSQL, under SQLite's
// single writer), so that they need no second query. The rows' lease
// fields still hold what was read; callers set them if they use them.
func LeaseRows[T any](ctx context.Context, db *store.DB, l RowLeaser[T]) ([]T, error) {
	read := map[string]T{}
	ids, err := lease(ctx, db, leaser{
		Candidates: func(ctx context.Context, c *ent.Client, lock bool) ([]string, error) {
			rows, err := l.Candidates(ctx, c, lock)
			if err != nil {
				return nil, err
			}
			clear(read) // a transaction run again reads afresh
			ids := make([]string, len(rows))
			for i, r := range rows {
				ids[i] = l.ID(r)
				read[ids[i]] = r
			}
			return ids, nil
		},
		LeaseAll: l.LeaseAll,
		LeaseOne: l.LeaseOne,
	})
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	rows := make([]T, len(ids))
	for i, id := range ids {
		rows[i] = read[id]
	}
	return rows, nil
}

// Mine is the predicate a worker's finishing update must include, so that a
// worker whose lease expired cannot overwrite another's work.
func Mine(owner string) predicate.Transaction { return transaction.LeaseOwner(owner) }

// InBatchAll records the outcomes of a batch of claimed items in one
// database transaction: one commit for the batch instead of one per item.
// record is given the whole batch (to write it with one statement) in tx,
// the transaction handed to it. Should that transaction fail, each item is
// recorded again alone in a transaction of its own, so one bad item costs
// the others nothing. It returns each item's error, in order.
func InBatchAll[T any](ctx context.Context, db *store.DB, items []T, record func(ctx context.Context, tx *ent.Tx, items []T) error) []error {
	errs := make([]error, len(items))
	if len(items) == 0 {
		return errs
	}
	err := db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error { return record(ctx, tx, items) })
	if err == nil || len(items) == 1 {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	for i := range items {
		errs[i] = db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error { return record(ctx, tx, items[i:i+1]) })
	}
	return errs
}

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

// WorkerOptions tune a worker over due transactions. Zero values take the
// defaults.
type WorkerOptions struct {
	// Owner names this instance in leases; default Owner().
	Owner string
	// Poll is how often due rows are looked for; default 1s.
	Poll time.Duration
	// Lease is how long a claimed row is reserved (by the injected clock)
	// before another instance may take it over; default 1m.
	Lease time.Duration
	// Batch is the most rows claimed at once; default 100.
	Batch int
	// Log receives failures; default slog.Default().
	Log *slog.Logger
}

// WithDefaults fills in the zero values.
func (o WorkerOptions) WithDefaults() WorkerOptions {
	if o.Owner == "" {
		o.Owner = Owner()
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

// JobTimeout bounds the work on one row, which runs on after a shutdown
// began so that SIGTERM drains the work in hand instead of abandoning it to
// the lease.
const JobTimeout = 30 * time.Second

// Handler finishes one claimed row in its own database transaction; false
// means the row was no longer due or no longer owner's, and nothing changed.
type Handler func(ctx context.Context, t *ent.Transaction, owner string) (bool, error)

// Worker is one kind of background work on transactions.
type Worker struct {
	Name   string
	DB     *store.DB
	Now    func() time.Time
	Due    []predicate.Transaction
	Handle Handler
}

// Run handles due rows every opt.Poll until ctx ends. Any number of
// instances may run it on one database: each row is leased to one of them,
// and the handler's update is conditional on the lease (Mine) and on the
// expected state. It keeps no state between passes, so a restart loses
// nothing.
func (w Worker) Run(ctx context.Context, opt WorkerOptions) {
	opt = opt.WithDefaults()
	fails := &Failures{Log: opt.Log}
	Loop(ctx, opt.Poll, nil, func(ctx context.Context) {
		for ctx.Err() == nil {
			claimed, err := w.RunDue(ctx, opt.Owner, opt.Lease, opt.Batch)
			if err != nil && ctx.Err() == nil {
				fails.Failed(w.Name+" failed", err)
			}
			if claimed < opt.Batch {
				return
			}
		}
	})
}

// RunDue claims up to limit due rows for owner and handles each in its own
// database transaction. It returns how many it claimed, and the failures
// joined; a row that failed stays due and is retried once its lease ends.
func (w Worker) RunDue(ctx context.Context, owner string, lease time.Duration, limit int) (int, error) {
	due, err := Claim(ctx, w.DB, owner, w.Now(), lease, limit, w.Due...)
	if err != nil {
		return 0, fmt.Errorf("%s: claim: %w", w.Name, err)
	}
	var errs []error
	for _, t := range due {
		if ctx.Err() != nil {
			break // the rest go back to the pool when their lease ends
		}
		jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), JobTimeout)
		_, err := w.Handle(jctx, t, owner)
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", w.Name, t.Reference, err))
		}
	}
	return len(due), errors.Join(errs...)
}
