package webhooks

import (
	"context"
	"errors"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"merchantpay/ent"
	"merchantpay/ent/predicate"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/internal/hookwire"
)

// Interrupted is the error an attempt is recorded with when the instance
// making it stopped (a crash, a kill) before recording its outcome: the
// receiver may or may not have got the request, and no answer is known.
const Interrupted = hookwire.FailureInterrupted

// An attempt in flight is marked on its delivery by the claim that leases
// it (inflight_attempt, the number the attempt will have, and
// inflight_started_at), in the same write as the lease, and unmarked by the
// write that records its outcome or gives the lease back. A mark that
// outlives its lease therefore names an attempt whose outcome was never
// recorded: the next claim keeps it, and its claimer records that attempt
// as interrupted before making its own (recordInterrupted). A mark whose
// number is not the next attempt's (one already recorded by an instance
// that does not unmark, such as the release before) is stale and replaced.

// markInflight sets, in a claim's update, the mark of the attempt it leases
// the delivery for, keeping an interrupted attempt's mark. now is the
// claim's time, to the microsecond (see claimTime).
func markInflight(u *entsql.UpdateBuilder, now time.Time) {
	u.Set(webhookdelivery.FieldInflightAttempt, entsql.ExprFunc(func(b *entsql.Builder) {
		b.Ident(webhookdelivery.FieldAttempts).WriteString(" + 1")
	}))
	u.Set(webhookdelivery.FieldInflightStartedAt, entsql.ExprFunc(func(b *entsql.Builder) {
		b.WriteString("CASE WHEN ").Ident(webhookdelivery.FieldInflightAttempt).WriteString(" = ").
			Ident(webhookdelivery.FieldAttempts).WriteString(" + 1 THEN ").
			Ident(webhookdelivery.FieldInflightStartedAt).WriteString(" ELSE ").Arg(now).WriteString(" END")
	}))
}

// claimTime is a claim's time cut to the microsecond, what both databases
// keep, so that the mark a claim writes reads back equal to it.
func claimTime(now time.Time) time.Time { return now.Truncate(time.Microsecond) }

// liveMark reports whether dl, as read before a claim, holds the mark of an
// attempt never recorded.
func liveMark(dl *ent.WebhookDelivery) bool {
	return dl.InflightAttempt != nil && *dl.InflightAttempt == dl.Attempts+1 && dl.InflightStartedAt != nil
}

// interruptedAt is, for dl as its claim at now left it, when the attempt
// it found interrupted began; nil when there was none.
func interruptedAt(dl *ent.WebhookDelivery, now time.Time) *time.Time {
	if dl.InflightStartedAt == nil || dl.InflightStartedAt.Equal(now) {
		return nil
	}
	at := *dl.InflightStartedAt
	return &at
}

// recordInterrupted records the interrupted attempt of a delivery this
// instance has just claimed, at, as an attempt without an answer, numbered
// before the attempt about to be made; the delivery's mark moves on to that
// next attempt. It reports false when the lease was lost meanwhile.
//
// An interrupted attempt may never have reached the receiver: a delivery
// is marked when it is claimed, and claims run ahead of the senders, so
// one still queued when its instance died is taken for interrupted too. It
// therefore counts in the delivery's attempts but takes no step of the
// retry schedule, and never fails the delivery: the attempt that follows,
// made at once (the lease running out was the wait), is a real one in the
// schedule step the interrupted attempt was in.
func (d *Dispatcher) recordInterrupted(ctx context.Context, dl *ent.WebhookDelivery, at time.Time) (bool, error) {
	now := d.clock.Now()
	number := dl.Attempts + 1
	err := d.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		if err := insertAttempts(ctx, d.db, c, []recordReq{{dl: dl, out: outcome{started: at, err: Interrupted}}}); err != nil {
			return err
		}
		k, err := c.WebhookDelivery.Update().
			Where(webhookdelivery.ID(dl.ID), webhookdelivery.LeaseOwner(d.owner), webhookdelivery.InflightAttempt(number)).
			SetAttempts(number).ClearLastStatusCode().SetLastError(Interrupted).SetUpdatedAt(now).
			SetInflightAttempt(number + 1).SetInflightStartedAt(now).
			Save(ctx)
		if err == nil && k == 0 {
			err = errMoved
		}
		return err
	})
	if errors.Is(err, errMoved) {
		return false, nil // another instance holds it now
	}
	if err != nil {
		return false, err
	}
	if d.cfg.Observe != nil {
		d.cfg.Observe(0, Interrupted, 0)
	}
	dl.Attempts = number
	next := number + 1
	dl.InflightAttempt, dl.InflightStartedAt = &next, &now
	return true, nil
}

// leave is the request, for the recorders, to clear the mark of dl, a
// claimed delivery left to its lease without an attempt, so that the next
// claim does not take it for an interrupted one. Through the recorders,
// the marks of many such deliveries (a queue that waited too long, under
// overload) are cleared with one update instead of a transaction each.
func leave(dl *ent.WebhookDelivery, done func(error)) recordReq {
	return recordReq{dl: dl, unmark: true, done: done}
}

// unmarkDone is the done of leave's request: it logs a failure and
// finishes the delivery.
func (d *Dispatcher) unmarkDone(dl *ent.WebhookDelivery, finish func()) func(error) {
	return func(err error) {
		if err != nil {
			d.cfg.Log.Warn("webhook delivery: clearing its attempt mark failed", "delivery", dl.ID, "err", err)
		}
		finish()
	}
}

// unmarkAll clears, with one update, the marks of the deliveries of batch
// (leave's requests) whose claims still hold them. Any interrupted attempt
// they were found with is recorded by then: the mark left is their claim's.
// The recorders may get to it late, after a lease ran out and the delivery
// was claimed again, by this instance too: each row is therefore cleared
// only while it keeps the lease expiry its claim wrote (one claim's own),
// so that a later claim's mark, the one its attempt stands on, is kept.
func (d *Dispatcher) unmarkAll(ctx context.Context, batch []recordReq) error {
	// A claim leases its deliveries until one time: the rows group by it.
	byLease := map[time.Time][]string{}
	var leases []time.Time
	for _, r := range batch {
		if r.dl.LeaseUntil == nil {
			continue // not claimed: no mark of its claim to clear
		}
		until := r.dl.LeaseUntil.UTC() // as the clock wrote it
		if _, ok := byLease[until]; !ok {
			leases = append(leases, until)
		}
		byLease[until] = append(byLease[until], r.dl.ID)
	}
	if len(leases) == 0 {
		return nil
	}
	held := make([]predicate.WebhookDelivery, len(leases))
	for i, until := range leases {
		held[i] = webhookdelivery.And(webhookdelivery.IDIn(byLease[until]...),
			webhookdelivery.LeaseUntil(until))
	}
	return d.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		return tx.Client().WebhookDelivery.Update().
			Where(webhookdelivery.LeaseOwner(d.owner), webhookdelivery.Or(held...)).
			ClearInflightAttempt().ClearInflightStartedAt().Exec(ctx)
	})
}
