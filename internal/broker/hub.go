package broker

import (
	"context"
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

// start reads where the outbox ends. On PostgreSQL, ids missing just below
// the end may belong to transactions still in flight: they are tracked as
// gaps, and the events above the lowest of them are held back like any
// other. (SQLite commits ids in order, one writer at a time: an id missing
// below a visible one never comes.)
func (b *Broker) start(ctx context.Context) error {
	b.gaps, b.held, b.front = map[int64]gap{}, nil, 0 // a retry starts afresh
	c := b.db.Reader()
	top, err := c.Event.Query().Order(ent.Desc(event.FieldID)).Limit(1).IDs(ctx)
	if err != nil {
		return err
	}
	if len(top) == 0 || !b.db.IsPostgres() {
		if len(top) > 0 {
			b.maxSeen = top[0]
		}
		return b.release(ctx)
	}
	b.maxSeen = top[0]
	recent, err := c.Event.Query().Where(event.IDGT(b.maxSeen - initWindow)).Order(ent.Asc(event.FieldID)).IDs(ctx)
	if err != nil {
		return err
	}
	b.front = max(b.maxSeen-initWindow, 0)
	now := b.cfg.Now()
	next := b.front + 1
	for _, id := range recent {
		for ; next < id; next++ {
			b.gaps[next] = gap{since: now}
		}
		next = id + 1
		if len(b.gaps) > 0 {
			b.hold(&ent.Event{ID: id}, true)
		}
	}
	return b.release(ctx)
}

// poll reads the new events and settles open gaps, then hands out in id
// order everything below the lowest gap still open.
func (b *Broker) poll(ctx context.Context) error {
	c := b.db.Reader()
	now := b.cfg.Now()
	full := false
	for {
		if len(b.held) >= maxHeld {
			// Enough waits in memory; the rest is read once the gap
			// below it settles.
			full = true
			break
		}
		light := b.light()
		evs, err := b.query(ctx, c.Event.Query().Where(event.IDGT(b.maxSeen)).Limit(pageSize), light)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if run := ev.ID - b.maxSeen - 1; run > 0 && run <= maxGapRun && b.db.IsPostgres() {
				for id := b.maxSeen + 1; id < ev.ID; id++ {
					b.gaps[id] = gap{since: now}
				}
			}
			b.maxSeen = ev.ID
			b.hold(ev, light)
		}
		if err := b.release(ctx); err != nil {
			return err
		}
		if len(evs) < pageSize {
			break
		}
	}
	if len(b.gaps) > 0 || b.lateDue(now) {
		if err := b.settleGaps(ctx, now); err != nil {
			return err
		}
		if err := b.release(ctx); err != nil {
			return err
		}
	}
	if full && len(b.held) < maxHeld {
		b.Wake()
	}
	return nil
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

// dispatch hands evs (in id order) to their subscribers and then, in the
// same critical section, sets low to upTo: a subscriber that joins later
// replays up to low and gets every id above it from the hub. Events read
// light are read again in full if a subscriber has joined meanwhile.
func (b *Broker) dispatch(ctx context.Context, evs []*ent.Event, light bool, upTo int64) error {
	if len(evs) == 0 {
		b.mu.Lock()
		b.low = upTo
		b.mu.Unlock()
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
			b.low = upTo
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
		b.low = upTo
		b.mu.Unlock()
		return nil
	}
}
