package webhooks

import (
	"context"
	"sync"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/internal/jobs"
	"merchantpay/internal/tenant"
)

// Run fans out and delivers until ctx ends, then waits for the attempts in
// flight (each bounded by Timeout) so none is cut off half recorded.
//
// Three stages run side by side so that none waits for another: fan-out
// (when woken, by new events here or elsewhere, and at every poll), a
// claimer that leases due deliveries ahead of need, and Concurrency senders
// taking the claimed deliveries from a queue and handing the outcomes to
// the recorders without waiting for them. The claimer keeps at most
// 2*Concurrency deliveries claimed and not yet recorded (one queue's worth
// beside the attempts in flight) and claims once a quarter of that is free (or
// none is left), so that claims stay few beside the deliveries they feed and
// a queued delivery waits at most one Timeout for a sender, well inside its
// lease. Deliveries still queued at shutdown are released at once instead of
// waiting for their lease to run out.
func (d *Dispatcher) Run(ctx context.Context) {
	sys := tenant.System(ctx)
	// Attempts outlive ctx so shutdown lets them finish and be recorded.
	work := context.WithoutCancel(sys)
	limit := 2 * d.cfg.Concurrency
	records := make(chan recordReq, limit)
	recorded := make(chan struct{})
	var rec sync.WaitGroup
	for range recorders {
		rec.Add(1)
		go func() { defer rec.Done(); d.recorder(work, records) }()
	}
	go func() { rec.Wait(); close(recorded) }()
	defer func() { close(records); <-recorded }()

	queue := make(chan claimedDelivery, limit)
	finished := make(chan struct{}, limit)
	fannedOut := make(chan struct{}, 1)
	var stages sync.WaitGroup
	stages.Add(1)
	go func() { defer stages.Done(); d.fanOutLoop(ctx, sys, fannedOut) }()
	for range d.cfg.Concurrency {
		stages.Add(1)
		go func() { defer stages.Done(); d.sender(ctx, work, queue, finished, records) }()
	}
	d.claimLoop(ctx, sys, limit, queue, finished, fannedOut)
	stages.Wait()
	close(queue)
	d.release(work, queue)
}

// fanOutLoop runs fan-out when woken and at every poll, at most once per
// wakeGap (every commit of an event wakes the dispatcher; under load one
// fan-out serves them all), and tells the claimer after each batch, so that
// a backlog's first deliveries are sent while the rest is fanned out, and
// after each run.
func (d *Dispatcher) fanOutLoop(ctx, sys context.Context, fannedOut chan<- struct{}) {
	tick := time.NewTicker(d.cfg.PollInterval)
	defer tick.Stop()
	fails := &jobs.Failures{Log: d.cfg.Log}
	for {
		tell := func() {
			select {
			case fannedOut <- struct{}{}:
			default:
			}
		}
		if err := d.fanOut(sys, tell); err != nil && ctx.Err() == nil {
			fails.Warn("webhook fan-out failed", err)
		}
		// Also when nothing was fanned out: a wake-up may be a redelivery
		// or another instance's deliveries.
		tell()
		select {
		case <-ctx.Done():
			return
		case <-time.After(wakeGap):
		}
		select {
		case <-ctx.Done():
			return
		case <-d.cfg.Wake:
		case <-d.nudge:
		case <-tick.C:
		}
	}
}

// claimLoop leases due deliveries into queue while fewer than limit are
// claimed and not yet recorded, until ctx ends, a quarter of limit at least
// (or whatever is due when nothing is outstanding). After a claim that
// found fewer than it asked for, it looks again only after a fan-out or a
// wake-up and at every poll (retries falling due), not at every finished
// attempt.
func (d *Dispatcher) claimLoop(ctx, sys context.Context, limit int, queue chan<- claimedDelivery, finished <-chan struct{}, fannedOut <-chan struct{}) {
	tick := time.NewTicker(d.cfg.PollInterval)
	defer tick.Stop()
	fails := &jobs.Failures{Log: d.cfg.Log}
	refill := max(1, limit/4)
	outstanding := 0
	look := true
	for {
		if free := limit - outstanding; look && (free >= refill || outstanding == 0) {
			claimed, err := d.claim(sys, free)
			if err != nil && ctx.Err() == nil {
				fails.Warn("claiming webhook deliveries failed", err)
			}
			for _, a := range claimed {
				queue <- a // never blocks: queue holds limit
			}
			outstanding += len(claimed)
			// Fewer than asked: nothing else is due until something changes.
			look = len(claimed) == free
		}
		select {
		case <-ctx.Done():
			return
		case <-finished:
			outstanding--
		drain:
			for {
				select {
				case <-finished:
					outstanding--
				default:
					break drain
				}
			}
		case <-fannedOut:
			look = true
		case <-tick.C:
			look = true
		}
	}
}

// sender makes the attempts of queued deliveries until ctx ends or the
// queue closes.
func (d *Dispatcher) sender(ctx, work context.Context, queue <-chan claimedDelivery, finished chan<- struct{}, records chan<- recordReq) {
	for {
		select {
		case <-ctx.Done():
			return
		case a, ok := <-queue:
			if !ok {
				return
			}
			d.attempt(work, a, records, func() { finished <- struct{}{} })
		}
	}
}

// release gives back the leases of deliveries claimed but not attempted, so
// that another instance (or the next start) sends them without waiting for
// the lease to run out, with their attempt marks; the mark of an attempt
// found interrupted and not yet recorded stays, for the next claim.
func (d *Dispatcher) release(ctx context.Context, queue <-chan claimedDelivery) {
	var fresh, interrupted []string
	for a := range queue {
		if a.interrupted != nil {
			interrupted = append(interrupted, a.dl.ID)
		} else {
			fresh = append(fresh, a.dl.ID)
		}
	}
	if len(fresh)+len(interrupted) == 0 {
		return
	}
	err := d.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		if len(fresh) > 0 {
			if err := c.WebhookDelivery.Update().
				Where(webhookdelivery.IDIn(fresh...), webhookdelivery.LeaseOwner(d.owner)).
				ClearLeaseOwner().ClearLeaseUntil().ClearInflightAttempt().ClearInflightStartedAt().Exec(ctx); err != nil {
				return err
			}
		}
		if len(interrupted) == 0 {
			return nil
		}
		return c.WebhookDelivery.Update().
			Where(webhookdelivery.IDIn(interrupted...), webhookdelivery.LeaseOwner(d.owner)).
			ClearLeaseOwner().ClearLeaseUntil().Exec(ctx)
	})
	if err != nil {
		d.cfg.Log.Warn("webhook delivery: releasing leases failed", "deliveries", len(fresh)+len(interrupted), "err", err)
	}
}
