package broker

import (
	"context"
	"slices"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/event"
)

// gap is an id missing below the highest the hub has seen: a transaction
// that drew it may still commit it.
type gap struct {
	// since is when the hub first noticed it (for GapTimeout).
	since time.Time
	// xmax is the PostgreSQL snapshot's xmax taken once the gap was noticed
	// (0: not taken yet): every transaction that could still commit the id
	// was in flight then and has a transaction id below it. (The id is drawn
	// one at a time, no sequence cache, and an event is written after the
	// row it is about, so its transaction holds a transaction id by then.)
	xmax int64
}

// heldEvent is an event the hub has read but not handed out yet, because
// an id below it is still open.
type heldEvent struct {
	ev *ent.Event
	// light: only the id was read (no subscriber then).
	light bool
}

// hold keeps ev until every id below it is settled; held stays in id order.
func (b *Broker) hold(ev *ent.Event, light bool) {
	h := heldEvent{ev: ev, light: light}
	if n := len(b.held); n == 0 || b.held[n-1].ev.ID < ev.ID {
		b.held = append(b.held, h)
		return
	}
	i, found := slices.BinarySearchFunc(b.held, ev.ID, func(h heldEvent, id int64) int {
		switch {
		case h.ev.ID < id:
			return -1
		case h.ev.ID > id:
			return 1
		}
		return 0
	})
	if found {
		return
	}
	b.held = slices.Insert(b.held, i, h)
}

// release hands out, in id order, the held events below the lowest open
// gap, and moves the hub's front (and low) up to just below that gap.
func (b *Broker) release(ctx context.Context) error {
	upTo := b.maxSeen
	for id := range b.gaps {
		if id-1 < upTo {
			upTo = id - 1
		}
	}
	if upTo <= b.front {
		return nil
	}
	n := 0
	for n < len(b.held) && b.held[n].ev.ID <= upTo {
		n++
	}
	for n > 0 {
		k := min(n, pageSize)
		chunk := make([]*ent.Event, k)
		light := false
		for i, h := range b.held[:k] {
			chunk[i] = h.ev
			light = light || h.light
		}
		to := upTo
		if k < n {
			to = chunk[k-1].ID
		}
		if err := b.dispatch(ctx, chunk, light, to); err != nil {
			return err
		}
		b.held = slices.Delete(b.held, 0, k)
		b.front = to
		n -= k
	}
	if b.front < upTo {
		// Only given-up ids in between: nothing to hand out, but low moves.
		if err := b.dispatch(ctx, nil, false, upTo); err != nil {
			return err
		}
		b.front = upTo
	}
	return nil
}

// settleGaps picks up the gaps whose transaction committed and gives up
// those that will never come: on PostgreSQL once every transaction in
// flight when the gap was noticed has ended, at the latest after
// GapTimeout.
func (b *Broker) settleGaps(ctx context.Context, now time.Time) error {
	for id, g := range b.gaps {
		if now.Sub(g.since) > b.cfg.GapTimeout {
			delete(b.gaps, id)
		}
	}
	if len(b.gaps) == 0 {
		return nil
	}
	// The horizon is read before the ids are looked up: an id committed
	// between the two is then seen by the look-up, not given up.
	xmin, xmax, err := b.snapshot(ctx)
	if err != nil {
		return err
	}
	ids := make([]int64, 0, len(b.gaps))
	for id, g := range b.gaps {
		if g.xmax == 0 {
			g.xmax = xmax
			b.gaps[id] = g
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) > gapQueryMax {
		ids = ids[:gapQueryMax]
	}
	light := b.light()
	evs, err := b.query(ctx, b.db.Reader().Event.Query().Where(event.IDIn(ids...)), light)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		delete(b.gaps, ev.ID)
		b.hold(ev, light)
	}
	for _, id := range ids {
		if g, open := b.gaps[id]; open && g.xmax <= xmin {
			// Every transaction that could have drawn it has ended, and
			// it is still not there: rolled back, or its session died.
			delete(b.gaps, id)
		}
	}
	return nil
}

// snapshot reads the PostgreSQL server's transaction horizon: xmin, the
// oldest transaction still in flight, and xmax, the first not yet started.
func (b *Broker) snapshot(ctx context.Context) (xmin, xmax int64, err error) {
	err = b.db.SQL().QueryRowContext(ctx,
		`SELECT pg_snapshot_xmin(s)::text::bigint, pg_snapshot_xmax(s)::text::bigint FROM pg_current_snapshot() AS s`).
		Scan(&xmin, &xmax)
	return xmin, xmax, err
}
