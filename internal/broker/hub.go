package broker

import (
	"context"
	"slices"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/internal/jobs"
	"merchantpay/internal/tenant"
)

// Run is the hub: it looks for newly visible events on every wake-up and
// poll until ctx ends, then closes every subscription.
func (b *Broker) Run(ctx context.Context) {
	sys := tenant.System(ctx)
	tick := time.NewTicker(b.cfg.PollInterval)
	defer tick.Stop()
	// A database that is unavailable fails every poll until it is back:
	// said once per jobs.QuietPeriod, as the other workers say it.
	fails := &jobs.Failures{Log: b.cfg.Log}
	for {
		err := b.start(sys)
		if err == nil {
			break
		}
		if ctx.Err() == nil {
			fails.Warn("event broker cannot read the outbox yet", err)
		}
		select {
		case <-ctx.Done():
			b.stop()
			return
		case <-tick.C:
		}
	}
	close(b.ready)
	for {
		last := time.Now()
		if err := b.poll(sys); err != nil && ctx.Err() == nil {
			fails.Warn("event broker poll failed", err)
		}
		select {
		case <-ctx.Done():
			b.stop()
			return
		case <-b.cfg.Wake:
		case <-b.nudge:
		case <-tick.C:
		}
		// Every commit of an event wakes the hub; under load one look per
		// wakeGap serves them all (a subscriber waits at most that longer).
		if wait := wakeGap - time.Since(last); wait > 0 {
			select {
			case <-ctx.Done():
				b.stop()
				return
			case <-time.After(wait):
			}
		}
	}
}

// stop ends every subscription; their clients reconnect elsewhere.
func (b *Broker) stop() {
	b.mu.Lock()
	b.stopped = true
	var all []*sub
	for _, m := range b.subs {
		for s := range m {
			all = append(all, s)
		}
	}
	b.mu.Unlock()
	for _, s := range all {
		s.cancel()
	}
	select {
	case <-b.ready:
	default:
		close(b.ready) // Subscribe callers waiting for the start now see stopped
	}
}

// start reads where the outbox ends. Ids missing just below the end may
// belong to transactions still in flight: they are tracked as gaps.
func (b *Broker) start(ctx context.Context) error {
	c := b.db.Reader()
	top, err := c.Event.Query().Order(ent.Desc(event.FieldID)).Limit(1).IDs(ctx)
	if err != nil {
		return err
	}
	if len(top) == 0 {
		b.publishLow()
		return nil
	}
	b.maxSeen = top[0]
	recent, err := c.Event.Query().Where(event.IDGT(b.maxSeen - initWindow)).IDs(ctx)
	if err != nil {
		return err
	}
	have := make(map[int64]bool, len(recent))
	for _, id := range recent {
		have[id] = true
	}
	now := b.cfg.Now()
	for id := max(b.maxSeen-initWindow+1, 1); id < b.maxSeen; id++ {
		if !have[id] {
			b.gaps[id] = now
		}
	}
	b.publishLow()
	return nil
}

// publishLow sets low from the hub's state.
func (b *Broker) publishLow() {
	low := b.maxSeen
	for id := range b.gaps {
		if id-1 < low {
			low = id - 1
		}
	}
	b.mu.Lock()
	b.low = low
	b.mu.Unlock()
}

// poll hands out gaps that got filled, then new events, in id order.
func (b *Broker) poll(ctx context.Context) error {
	defer b.publishLow()
	c := b.db.Reader()
	now := b.cfg.Now()
	if len(b.gaps) > 0 {
		ids := make([]int64, 0, len(b.gaps))
		for id, since := range b.gaps {
			if now.Sub(since) > b.cfg.GapTimeout {
				delete(b.gaps, id)
				continue
			}
			ids = append(ids, id)
		}
		slices.Sort(ids)
		if len(ids) > gapQueryMax {
			ids = ids[:gapQueryMax]
		}
		if len(ids) > 0 {
			light := b.light()
			evs, err := b.query(ctx, c.Event.Query().Where(event.IDIn(ids...)), light)
			if err != nil {
				return err
			}
			for _, ev := range evs {
				delete(b.gaps, ev.ID)
			}
			if err := b.dispatch(ctx, evs, light); err != nil {
				return err
			}
		}
	}
	for {
		light := b.light()
		evs, err := b.query(ctx, c.Event.Query().Where(event.IDGT(b.maxSeen)).Limit(pageSize), light)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if run := ev.ID - b.maxSeen - 1; run > 0 && run <= maxGapRun {
				for id := b.maxSeen + 1; id < ev.ID; id++ {
					b.gaps[id] = now
				}
			}
			b.maxSeen = ev.ID
		}
		if err := b.dispatch(ctx, evs, light); err != nil {
			return err
		}
		if len(evs) < pageSize {
			return nil
		}
	}
}

// light: with no subscriber, only ids are read (the payloads are not
// needed to keep track).
func (b *Broker) light() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n == 0
}

func (b *Broker) query(ctx context.Context, q *ent.EventQuery, light bool) ([]*ent.Event, error) {
	q = q.Order(ent.Asc(event.FieldID))
	if light {
		q.Select(event.FieldID)
	}
	return q.All(ctx)
}

// dispatch hands evs to their subscribers. Events read light are read
// again in full if a subscriber has joined meanwhile.
func (b *Broker) dispatch(ctx context.Context, evs []*ent.Event, light bool) error {
	if len(evs) == 0 {
		return nil
	}
	for {
		b.mu.Lock()
		if light && b.n > 0 {
			b.mu.Unlock()
			ids := make([]int64, len(evs))
			for i, ev := range evs {
				ids[i] = ev.ID
			}
			full, err := b.query(ctx, b.db.Reader().Event.Query().Where(event.IDIn(ids...)), false)
			if err != nil {
				return err
			}
			evs, light = full, false
			continue
		}
		if light {
			b.mu.Unlock()
			return nil
		}
		keys := b.keysLocked(evs)
		if len(keys) > 0 {
			b.mu.Unlock()
			live, err := b.cfg.Keys.Live(ctx, keys)
			if err != nil {
				b.cfg.Log.Warn("checking subscribers' keys failed; delivering", "err", err)
				live = nil
				keys = nil
			}
			b.mu.Lock()
			b.revokeLocked(keys, live)
		}
		for _, ev := range evs {
			for s := range b.subs[tenant.Tenant{MerchantID: ev.MerchantID, Mode: ev.Mode}] {
				if s.wants(ev.Type) {
					b.deliverLocked(s, ev)
				}
			}
		}
		b.mu.Unlock()
		return nil
	}
}
