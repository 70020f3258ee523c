package broker

import (
	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/internal/tenant"
)

// pump feeds s from its own goroutine: with replay, the stored events after
// from up to low (the hub's low when s joined); then whatever the hub queued
// meanwhile (every id above low, in order); then it hands s to the hub and
// ends.
func (b *Broker) pump(s *sub, replay bool, from, low int64) {
	if replay && !b.replay(s, from, low) {
		b.pumpEnded(s)
		return
	}
	if replay {
		b.mu.Lock()
		s.replaying = false
		s.lateSent = nil
		b.mu.Unlock()
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
			b.mu.Unlock()
			return
		}
		batch := s.missed
		s.missed = nil
		b.mu.Unlock()
		for _, ev := range batch {
			if !b.send(s, ev) {
				b.pumpEnded(s)
				return
			}
		}
	}
}

// replay sends s's stored events after from and up to low, in id order.
// Those above low come from the hub, after any id below them that is still
// open: replaying them now would hand them out of order.
func (b *Broker) replay(s *sub, from, low int64) bool {
	ctx := tenant.With(s.ctx, s.t)
	cursor := from
	for cursor < low {
		q := b.db.Reader().Event.Query().Where(event.IDGT(cursor), event.IDLTE(low))
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
		if len(evs) > 0 {
			cursor = evs[len(evs)-1].ID
		}
		for _, ev := range b.replayFilter(s, evs) {
			if !b.send(s, ev) {
				return false
			}
		}
		if len(evs) < pageSize {
			return true
		}
	}
	return true
}

func mapKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
