package broker

import (
	"context"

	"merchantpay/ent"
	"merchantpay/internal/tenant"
)

// KeyCheck is how the broker learns whether subscribers' credentials
// still hold.
type KeyCheck struct {
	// Of is the credential of a subscriber's context ("" for none: never
	// checked).
	Of func(ctx context.Context) string
	// Live reports which of the credentials still hold; an error delivers
	// as if all did (logged), so that a failed check loses no event.
	Live func(ctx context.Context, keys []string) (map[string]bool, error)
	// Revoked is called, on a goroutine of its own, with the context of
	// each subscriber whose credential no longer holds, to close its
	// connection; the subscriber is ended (its channel closes) after it.
	Revoked func(ctx context.Context)
}

// keysLocked lists the credentials of the subscribers evs would reach.
func (b *Broker) keysLocked(evs []*ent.Event) []string {
	if b.cfg.Keys.Live == nil {
		return nil
	}
	var keys []string
	seen := map[string]bool{}
	done := map[tenant.Tenant]bool{}
	for _, ev := range evs {
		t := tenant.Tenant{MerchantID: ev.MerchantID, Mode: ev.Mode}
		if done[t] {
			continue
		}
		done[t] = true
		for s := range b.subs[t] {
			if s.key != "" && !seen[s.key] {
				seen[s.key] = true
				keys = append(keys, s.key)
			}
		}
	}
	return keys
}

// revokeLocked ends every subscriber whose credential was among checked
// and is not live, and hands it to Keys.Revoked. Subscribers that joined
// while the check ran are left alone: their credential was not checked,
// and they have just been authenticated.
func (b *Broker) revokeLocked(checked []string, live map[string]bool) {
	for _, k := range checked {
		if live[k] {
			continue
		}
		for _, m := range b.subs {
			for s := range m {
				if s.key != k || s.closed {
					continue
				}
				s.closed = true // nothing more is handed to it
				if b.cfg.Keys.Revoked == nil {
					s.cancel()
					continue
				}
				// The connection first, so that its client sees it closed
				// rather than the subscription completed.
				go func(s *sub) {
					b.cfg.Keys.Revoked(s.ctx)
					s.cancel()
				}(s)
			}
		}
	}
}
