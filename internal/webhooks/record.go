package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/ent/webhookendpoint"
	"merchantpay/internal/hookwire"
	"merchantpay/present/jsonx"
)

// record stores the attempt and moves the delivery on: succeeded on 2xx;
// failed, and the endpoint disabled, on 410; otherwise the next retry, or
// failed once the schedule is spent. If a redelivery came in meanwhile (the
// generation moved), only the attempt is kept and the new run stands.
func (d *Dispatcher) record(ctx context.Context, dl *ent.WebhookDelivery, ep *ent.WebhookEndpoint, out outcome) error {
	return d.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		if err := insertAttempts(ctx, d.db, c, []recordReq{{dl: dl, ep: ep, out: out}}); err != nil {
			return err
		}
		return d.advance(ctx, c, dl, ep, out)
	})
}

// advance moves the delivery on after an attempt (see record) with c, the
// client of the caller's transaction.
func (d *Dispatcher) advance(ctx context.Context, c *ent.Client, dl *ent.WebhookDelivery, ep *ent.WebhookEndpoint, out outcome) error {
	now := d.clock.Now()
	upd := c.WebhookDelivery.Update().Where(webhookdelivery.ID(dl.ID))
	k, err := d.settle(upd, dl, out, now).Save(ctx)
	if err != nil {
		return err
	}
	if k == 0 {
		// Redelivered meanwhile, or the lease ran out before this record:
		// count the attempt, leave the new run (recordPostgresSQL's
		// comment says which number it may share).
		if _, err := c.WebhookDelivery.Update().Where(webhookdelivery.ID(dl.ID)).
			AddAttempts(1).Save(ctx); err != nil {
			return err
		}
		if _, err := c.WebhookDelivery.Update().Where(webhookdelivery.ID(dl.ID), webhookdelivery.LeaseOwner(d.owner)).
			ClearLeaseOwner().ClearLeaseUntil().ClearInflightAttempt().ClearInflightStartedAt().Save(ctx); err != nil {
			return err
		}
	}
	if out.status == http.StatusGone {
		reason := fmt.Sprintf("disabled at %s: the receiver answered 410 Gone", jsonx.Time(now))
		if _, err := c.WebhookEndpoint.Update().
			Where(webhookendpoint.ID(ep.ID), webhookendpoint.Enabled(true)).
			SetEnabled(false).SetDisabledReason(reason).SetUpdatedAt(now).Save(ctx); err != nil {
			return err
		}
		d.cfg.Log.Info("webhook endpoint disabled after 410 Gone", "endpoint", ep.ID, "merchant", ep.MerchantID)
	}
	return nil
}

// settlement is a delivery's state after an attempt it still holds (see
// settle); nil fields are left as they are.
type settlement struct {
	attempts    int
	status      *string
	runAttempts *int
	next        *time.Time // nil: cleared
	completed   *time.Time
	lastStatus  *int    // nil: cleared (no answer)
	lastErr     *string // nil: cleared
}

// settlementOf is the move of dl after an attempt that saw out: succeeded
// on 2xx; failed on 410; otherwise the next retry, or failed once the
// schedule is spent.
func (d *Dispatcher) settlementOf(dl *ent.WebhookDelivery, out outcome, now time.Time) settlement {
	s := settlement{attempts: dl.Attempts + 1}
	if out.status != 0 {
		s.lastStatus = &out.status
	}
	if out.err != "" {
		s.lastErr = &out.err
	}
	end := func(status string) {
		s.status, s.completed = &status, &now
	}
	switch {
	case out.succeeded():
		end(StatusSucceeded)
	case out.status == http.StatusGone:
		end(StatusFailed)
	default:
		run := dl.RunAttempts + 1
		s.runAttempts = &run
		if delay, ok := hookwire.NextAttempt(d.cfg.Schedule, run, d.cfg.Jitter); ok {
			next := now.Add(delay)
			s.next = &next
			d.wakeForRetry(delay)
		} else {
			end(StatusFailed)
		}
	}
	return s
}

// settle adds to upd, an update of deliveries in dl's state (owner,
// generation, attempts made) that saw out, the move after the attempt
// (settlementOf), and the end of the lease and of its attempt mark. The
// update leaves alone a delivery whose lease or generation moved on.
func (d *Dispatcher) settle(upd *ent.WebhookDeliveryUpdate, dl *ent.WebhookDelivery, out outcome, now time.Time) *ent.WebhookDeliveryUpdate {
	s := d.settlementOf(dl, out, now)
	upd.Where(webhookdelivery.LeaseOwner(d.owner), webhookdelivery.Generation(dl.Generation)).
		SetAttempts(s.attempts).ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(now).
		ClearInflightAttempt().ClearInflightStartedAt().
		SetNillableStatus(s.status).SetNillableRunAttempts(s.runAttempts).SetNillableCompletedAt(s.completed)
	if s.lastStatus != nil {
		upd.SetLastStatusCode(*s.lastStatus)
	} else {
		upd.ClearLastStatusCode()
	}
	if s.lastErr != nil {
		upd.SetLastError(*s.lastErr)
	} else {
		upd.ClearLastError()
	}
	if s.next != nil {
		upd.SetNextAttemptAt(*s.next)
	} else {
		upd.ClearNextAttemptAt()
	}
	return upd
}

// errMoved rolls back a batch in which a delivery's lease or generation
// moved on (a redelivery, an expired lease): its outcomes are then
// recorded one by one, each with advance's care.
var errMoved = errors.New("webhook delivery moved on during its attempt")

// advanceSucceeded moves on, with one update per group of like deliveries
// instead of one each, the deliveries of batch whose attempt succeeded, and
// returns the others. Like deliveries (same generation, attempts made and
// answer) take the same update; should it miss one, the batch is rolled
// back with errMoved. c is the client of the caller's transaction.
func (d *Dispatcher) advanceSucceeded(ctx context.Context, c *ent.Client, batch []recordReq) ([]recordReq, error) {
	type key struct{ generation, attempts, status int }
	groups := map[key][]recordReq{}
	var rest []recordReq
	for _, r := range batch {
		if !r.out.succeeded() {
			rest = append(rest, r)
			continue
		}
		k := key{r.dl.Generation, r.dl.Attempts, r.out.status}
		groups[k] = append(groups[k], r)
	}
	now := d.clock.Now()
	for _, g := range groups {
		ids := make([]string, len(g))
		for i, r := range g {
			ids[i] = r.dl.ID
		}
		upd := c.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...))
		k, err := d.settle(upd, g[0].dl, g[0].out, now).Save(ctx)
		if err != nil {
			return nil, err
		}
		if k != len(ids) {
			return nil, errMoved
		}
	}
	return rest, nil
}

// recordBatch bounds the outcomes recorded in one transaction; recorders
// record batches side by side.
const (
	recordBatch = 64
	recorders   = 4
)

// recordReq is an attempt's outcome waiting to be recorded.
type recordReq struct {
	dl  *ent.WebhookDelivery
	ep  *ent.WebhookEndpoint
	out outcome
	// unmark: no attempt was made, only the delivery's mark is cleared
	// (see leave).
	unmark bool
	// done is told the recording's result.
	done func(error)
}

// recorder records the outcomes of finished attempts, as many as are
// waiting (up to recordBatch) in one transaction: one commit for many
// deliveries instead of one each. Should that transaction fail, each
// outcome is recorded on its own, so one bad row costs the others nothing.
func (d *Dispatcher) recorder(ctx context.Context, in <-chan recordReq) {
	for first := range in {
		batch := []recordReq{first}
	more:
		for len(batch) < recordBatch {
			select {
			case r, ok := <-in:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		d.recordWaiting(ctx, batch)
	}
}

// recordWaiting records a recorder's batch and tells each request its
// result: the marks to clear with one update (unmarkAll), the outcomes in
// one transaction (recordAll), or each on its own should that fail.
func (d *Dispatcher) recordWaiting(ctx context.Context, batch []recordReq) {
	var outcomes, unmarks []recordReq
	for _, r := range batch {
		if r.unmark {
			unmarks = append(unmarks, r)
		} else {
			outcomes = append(outcomes, r)
		}
	}
	if len(unmarks) > 0 {
		err := d.unmarkAll(ctx, unmarks)
		for _, r := range unmarks {
			r.done(err)
		}
	}
	if len(outcomes) == 0 {
		return
	}
	err := d.recordAll(ctx, outcomes)
	for _, r := range outcomes {
		if err != nil && len(outcomes) > 1 {
			r.done(d.record(ctx, r.dl, r.ep, r.out))
			continue
		}
		r.done(err)
	}
}

// recordAll records batch in one transaction: on PostgreSQL in one
// statement (recordPostgres) unless an attempt saw 410 or a delivery comes
// twice; otherwise with recordInTx.
func (d *Dispatcher) recordAll(ctx context.Context, batch []recordReq) error {
	if d.db.IsPostgres() && oneStatement(batch) {
		return d.recordPostgres(ctx, batch, d.clock.Now())
	}
	return d.recordInTx(ctx, batch)
}

// recordInTx is recordAll's transaction: the attempts in one insert,
// successes with one update per group, the rest one by one.
func (d *Dispatcher) recordInTx(ctx context.Context, batch []recordReq) error {
	return d.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		if err := insertAttempts(ctx, d.db, c, batch); err != nil {
			return err
		}
		rest, err := d.advanceSucceeded(ctx, c, batch)
		if err != nil {
			return err
		}
		for _, r := range rest {
			if err := d.advance(ctx, c, r.dl, r.ep, r.out); err != nil {
				return err
			}
		}
		return nil
	})
}

// oneStatement reports whether recordPostgres may record batch: no 410
// (its endpoint is disabled too) and no delivery twice (one statement
// updates a row once).
func oneStatement(batch []recordReq) bool {
	seen := make(map[string]struct{}, len(batch))
	for _, r := range batch {
		if r.out.status == http.StatusGone {
			return false
		}
		if _, ok := seen[r.dl.ID]; ok {
			return false
		}
		seen[r.dl.ID] = struct{}{}
	}
	return true
}

// abandon ends a delivery whose endpoint is gone, without an attempt.
func (d *Dispatcher) abandon(ctx context.Context, dl *ent.WebhookDelivery, reason string) {
	now := d.clock.Now()
	err := d.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		_, err := tx.Client().WebhookDelivery.Update().
			Where(webhookdelivery.ID(dl.ID), webhookdelivery.LeaseOwner(d.owner), webhookdelivery.Generation(dl.Generation)).
			SetStatus(StatusFailed).SetLastError(reason).ClearNextAttemptAt().SetCompletedAt(now).
			ClearLeaseOwner().ClearLeaseUntil().ClearInflightAttempt().ClearInflightStartedAt().
			SetUpdatedAt(now).Save(ctx)
		return err
	})
	if err != nil {
		d.cfg.Log.Warn("webhook delivery: abandoning failed", "delivery", dl.ID, "err", err)
	}
}
