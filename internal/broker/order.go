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
	// bound is a PostgreSQL transaction id assigned after the gap was
	// noticed (0: none yet), so above that of every transaction that could
	// still commit the id. (Ids are drawn one at a time, no sequence cache,
	// and an event is written after the row it is about, so its transaction
	// holds a transaction id by then.) A snapshot's xmax would not do: it
	// is one past the last transaction to end, and one still running may
	// hold a larger id.
	bound int64
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
	fresh := false
	for _, g := range b.gaps {
		fresh = fresh || g.bound == 0
	}
	xmin, bound, err := b.horizon(ctx, fresh)
	if err != nil {
		return err
	}
	ids := make([]int64, 0, len(b.gaps))
	for id, g := range b.gaps {
		if g.bound == 0 {
			g.bound = bound
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
		if g, open := b.gaps[id]; open && g.bound <= xmin {
			// Every transaction that could have drawn it has ended, and
			// it is still not there: rolled back, or its session died.
			delete(b.gaps, id)
		}
	}
	return nil
}

// horizon reads xmin, the oldest PostgreSQL transaction id still in flight
// (every smaller one has ended) and, when bound, a transaction id assigned
// now, above every one already assigned: the statement then takes one of its
// own, so it is asked for only when new gaps were noticed. The snapshot is
// the statement's, taken before that id is assigned.
func (b *Broker) horizon(ctx context.Context, bound bool) (xmin, next int64, err error) {
	if !bound {
		err = b.db.SQL().QueryRowContext(ctx,
			`SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint`).Scan(&xmin)
		return xmin, 0, err
	}
	err = b.db.SQL().QueryRowContext(ctx,
		`SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint, pg_current_xact_id()::text::bigint`).
		Scan(&xmin, &next)
	return xmin, next, err
}
