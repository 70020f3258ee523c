package broker

import (
	"context"
	"slices"
	"time"

	"merchantpay/ent"
	"merchantpay/internal/jobs"
)

// An id given up on may still come: its transaction drew it before it held
// a PostgreSQL transaction id, so the in-flight read could not see it. Such
// ids are looked up with the open gaps until GapTimeout after they were
// noticed; one that shows up is handed out late, out of id order (as the
// only way not to lose it), and said in a WARN. Subscribers replaying at
// that moment get it once: from their replay or from the hub, never both.

// giveUp records id as given up, noticed at since.
func (b *Broker) giveUp(id int64, since time.Time) {
	b.mu.Lock()
	b.late[id] = since
	b.mu.Unlock()
}

// expireLate stops looking for ids noticed more than GapTimeout ago.
func (b *Broker) expireLate(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, since := range b.late {
		if now.Sub(since) > b.cfg.GapTimeout {
			delete(b.late, id)
		}
	}
}

// lateDue says whether the ids given up on are to be looked up at now: at
// most once per PollInterval, as rolled-back ids are routine and would
// otherwise cost a look-up on every wake-up. Only the hub writes late, so
// it may read its size unlocked.
func (b *Broker) lateDue(now time.Time) bool {
	return len(b.late) > 0 && now.Sub(b.lateLookedAt) >= b.cfg.PollInterval
}

// lateIDs lists up to gapQueryMax of the ids given up on, smallest first,
// and notes now as their last look-up. Watching more than that is said at
// WARN once per jobs.QuietPeriod: the others wait for a later look-up and
// may expire unseen.
func (b *Broker) lateIDs(now time.Time) []int64 {
	b.lateLookedAt = now
	b.mu.Lock()
	ids := make([]int64, 0, len(b.late))
	for id := range b.late {
		ids = append(ids, id)
	}
	b.mu.Unlock()
	slices.Sort(ids)
	if len(ids) > gapQueryMax && now.Sub(b.lateWarned) >= jobs.QuietPeriod {
		b.lateWarned = now
		b.cfg.Log.Warn("event broker watches more given-up event ids than one look-up reads; the largest are looked up later",
			"watched", len(ids), "per_lookup", gapQueryMax)
	}
	return ids[:min(gapQueryMax, len(ids))]
}

// deliverLate hands out evs, ids given up on that showed up after all,
// without moving low (everything below it is already settled). They stay
// watched if the hand-out fails, so the next look-up tries again.
func (b *Broker) deliverLate(ctx context.Context, evs []*ent.Event, light bool) error {
	if len(evs) == 0 {
		return nil
	}
	for _, ev := range evs {
		b.cfg.Log.Warn("event id given up on committed later; delivering it out of id order",
			"seq", ev.ID)
	}
	if err := b.dispatch(ctx, evs, light, b.front); err != nil {
		return err
	}
	b.mu.Lock()
	for _, ev := range evs {
		delete(b.late, ev.ID)
	}
	b.mu.Unlock()
	return nil
}

// lateLocked says whether the hub must skip ev, a late one, for s: s's
// replay already sent it. Otherwise a replaying s remembers it got it from
// the hub, so that its replay skips it. The caller holds Broker.mu.
func (b *Broker) lateLocked(s *sub, ev *ent.Event) (skip bool) {
	if _, late := b.late[ev.ID]; !late {
		return false
	}
	if _, dup := s.replayedLate[ev.ID]; dup {
		return true
	}
	if s.replaying {
		if s.lateSent == nil {
			s.lateSent = map[int64]struct{}{}
		}
		s.lateSent[ev.ID] = struct{}{}
	}
	return false
}

// replayFilter drops from a page of s's replay the late ids the hub already
// handed to s, and remembers the late ids the replay sends.
func (b *Broker) replayFilter(s *sub, evs []*ent.Event) []*ent.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.late) == 0 && len(s.lateSent) == 0 {
		return evs
	}
	out := make([]*ent.Event, 0, len(evs))
	for _, ev := range evs {
		if _, sent := s.lateSent[ev.ID]; sent {
			continue
		}
		if _, late := b.late[ev.ID]; late {
			if s.replayedLate == nil {
				s.replayedLate = map[int64]struct{}{}
			}
			s.replayedLate[ev.ID] = struct{}{}
		}
		out = append(out, ev)
	}
	return out
}
