package broker

import (
	"context"
	"slices"
	"strconv"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/event"
)

// gap is an id missing below the highest the hub has seen: a transaction
// that drew it may still commit it.
type gap struct {
	// since is when the hub first noticed it (for GapTimeout).
	since time.Time
	// looked: the id has been looked up once after it was noticed. Almost
	// every gap fills by then, so only those still open at their second
	// look cost the in-flight read.
	looked bool
	// inflight is the set of PostgreSQL transaction ids in flight in this
	// database at the gap's second look (nil: not read yet). The id was
	// drawn before the hub noticed the gap, so a transaction that can still
	// commit it was in flight then, and it almost surely holds a
	// transaction id by the second look: the statement that draws an event
	// id writes the event at once, and an event usually follows the row it
	// is about. Once none of the set is in flight and the id is still not
	// visible, it never comes. A transaction that drew the id without
	// holding a transaction id yet (a statement with several parts, whose
	// order PostgreSQL does not fix, may draw it before its first write) has
	// its id given up too early: the id is still looked for (late.go) and
	// delivered out of order if it shows up.
	inflight map[uint32]struct{}
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
// flight in this database at the gap's second look has ended, at the latest
// after GapTimeout. Ids given up are still looked for until GapTimeout
// (late.go), at most once per PollInterval. Statements: one look-up of the
// open ids (and of the given-up ones when due); only when a gap past its
// first look is still missing, one read of the transactions in flight and
// one more look-up of those gaps.
func (b *Broker) settleGaps(ctx context.Context, now time.Time) error {
	timedOut, lowest := 0, int64(0)
	for id, g := range b.gaps {
		if now.Sub(g.since) > b.cfg.GapTimeout {
			delete(b.gaps, id)
			if timedOut == 0 || id < lowest {
				lowest = id
			}
			timedOut++
		}
	}
	if timedOut > 0 {
		// Not watched any more: if its transaction commits later, live
		// subscribers never get it.
		b.cfg.Log.Warn("event ids still missing after the gap timeout are given up; one committed later reaches no live subscriber",
			"ids", timedOut, "lowest", lowest, "gap_timeout", b.cfg.GapTimeout)
	}
	b.expireLate(now)
	lateDue := b.lateDue(now)
	if len(b.gaps) == 0 && !lateDue {
		return nil
	}
	ids := make([]int64, 0, len(b.gaps))
	for id := range b.gaps {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if len(ids) > gapQueryMax {
		ids = ids[:gapQueryMax]
	}
	lookup := ids
	if lateDue {
		lookup = append(slices.Clone(ids), b.lateIDs(now)...)
	}
	light := b.light()
	late, err := b.lookUpGaps(ctx, lookup, light)
	if err != nil {
		return err
	}
	var due []int64
	for _, id := range ids {
		g, open := b.gaps[id]
		if !open {
			continue
		}
		if !g.looked {
			g.looked = true
			b.gaps[id] = g
			continue
		}
		due = append(due, id)
	}
	if len(due) == 0 {
		return b.deliverLate(ctx, late, light)
	}
	// The transactions in flight are read before these ids are looked up
	// again: one that commits between the two is then seen by the look-up,
	// not taken for gone.
	inNow, err := b.inFlight(ctx)
	if err != nil {
		return err
	}
	if _, err := b.lookUpGaps(ctx, due, light); err != nil {
		return err
	}
	for _, id := range due {
		g, open := b.gaps[id]
		if !open {
			continue
		}
		if g.inflight == nil {
			g.inflight = inNow
		}
		if !anyIn(g.inflight, inNow) {
			// Every transaction that could have drawn it has ended, and
			// it is still not there: rolled back, or its session died.
			delete(b.gaps, id)
			b.giveUp(id, g.since)
			continue
		}
		b.gaps[id] = g
	}
	return b.deliverLate(ctx, late, light)
}

// lookUpGaps reads the events of ids that are visible now: those of open
// gaps fill them and are held; the others (ids given up on) are returned.
func (b *Broker) lookUpGaps(ctx context.Context, ids []int64, light bool) ([]*ent.Event, error) {
	evs, err := b.query(ctx, b.db.Reader().Event.Query().Where(event.IDIn(ids...)), light)
	if err != nil {
		return nil, err
	}
	var late []*ent.Event
	for _, ev := range evs {
		if _, open := b.gaps[ev.ID]; open {
			delete(b.gaps, ev.ID)
			b.hold(ev, light)
			continue
		}
		late = append(late, ev)
	}
	return late, nil
}

// inFlight reads the ids of the transactions in flight in this database
// that hold one. The hub's own statement holds none; other databases on the
// server are not looked at. Ids are compared as sets, never by size, so
// transaction id wraparound does not matter.
func (b *Broker) inFlight(ctx context.Context) (map[uint32]struct{}, error) {
	b.inFlightReads.Add(1)
	rows, err := b.db.SQL().QueryContext(ctx,
		`SELECT backend_xid::text FROM pg_stat_activity WHERE datname = current_database() AND backend_xid IS NOT NULL`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	set := map[uint32]struct{}{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		x, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return nil, err
		}
		set[uint32(x)] = struct{}{}
	}
	return set, rows.Err()
}

// anyIn reports whether some id of set is in now.
func anyIn(set, now map[uint32]struct{}) bool {
	for x := range set {
		if _, ok := now[x]; ok {
			return true
		}
	}
	return false
}
