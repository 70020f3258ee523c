package broker

import (
	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/internal/tenant"
)

// pump feeds s from its own goroutine: with replay, the stored events after
// from (low: the hub's low when s joined); then whatever the hub queued
// meanwhile; then it hands s to the hub and ends.
func (b *Broker) pump(s *sub, replay bool, from, low int64) {
	if replay && !b.replay(s, from, low) {
		b.pumpEnded(s)
		return
	}
	for {
		b.mu.Lock()
		if s.closed || s.ctx.Err() != nil {
			b.mu.Unlock()
			b.pumpEnded(s)
			return
		}
		if len(s.missed) == 0 {
			s.running = false
			s.live = true
			b.pruneLocked(s)
			b.mu.Unlock()
			return
		}
		batch := s.missed
		s.missed = nil
		b.mu.Unlock()
		for _, ev := range batch {
			if _, dup := s.seen[ev.ID]; dup {
				delete(s.seen, ev.ID)
				continue
			}
			if !b.send(s, ev) {
				b.pumpEnded(s)
				return
			}
		}
	}
}

// replay sends s's stored events after from, in id order. Every id above
// low may still come from the hub, so it is remembered in seen.
func (b *Broker) replay(s *sub, from, low int64) bool {
	ctx := tenant.With(s.ctx, s.t)
	cursor := from
	for {
		q := b.db.Reader().Event.Query().Where(event.IDGT(cursor))
		if s.types != nil {
			q = q.Where(event.TypeIn(mapKeys(s.types)...))
		}
		evs, err := q.Order(ent.Asc(event.FieldID)).Limit(pageSize).All(ctx)
		if err != nil {
			if s.ctx.Err() == nil {
				b.cfg.Log.Warn("event replay failed; closing the subscription", "merchant", s.t.MerchantID, "err", err)
				s.cancel()
			}
			return false
		}
		for _, ev := range evs {
			if ev.ID > low {
				if s.seen == nil {
					s.seen = map[int64]struct{}{}
				}
				s.seen[ev.ID] = struct{}{}
			}
			if !b.send(s, ev) {
				return false
			}
			cursor = ev.ID
		}
		if len(evs) < pageSize {
			return true
		}
	}
}

func mapKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
