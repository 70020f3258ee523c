package broker

import (
	"context"
	"fmt"
	"strings"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/internal/apperr"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/ready"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// sub is one subscriber. Fields below ch are guarded by Broker.mu.
type sub struct {
	t tenant.Tenant
	// key is the subscriber's credential (Config.Keys.Of), "" for none.
	key    string
	types  map[string]struct{} // nil: every type
	ch     chan *ent.Event
	ctx    context.Context
	cancel context.CancelFunc
	// notify, when not nil, is called after every event put into ch and
	// after ch is closed (package ready): the consumer then needs no
	// goroutine waiting on ch.
	notify func()

	live     bool // the hub sends directly
	running  bool // a pump goroutine feeds it
	closed   bool // ended; nothing more is sent
	chClosed bool
	dropped  bool
	missed   []*ent.Event // handed over by the hub while running
	// after is the id the subscriber resumed after: a hub still behind it
	// when the subscriber joined must not hand over what came before.
	after int64
	// replaying: the pump has not finished the replay yet. lateSent are
	// late ids (late.go) the hub handed over meanwhile, for the replay to
	// skip; replayedLate are late ids the replay sent, for the hub to skip.
	replaying    bool
	lateSent     map[int64]struct{}
	replayedLate map[int64]struct{}
}

func (s *sub) wants(typ string) bool {
	if s.types == nil {
		return true
	}
	_, ok := s.types[typ]
	return ok
}

// Subscribe streams t's events of the given types (nil or empty: all) until
// ctx ends. With afterEventID (an evt_ id of t's), it first replays every
// stored event after that one in id order, then goes live, with no gap and
// no duplicate. Live events come in id order too (see the package doc). The channel closes when ctx ends, when the instance stops,
// or when the subscriber falls too far behind (resubscribe with after).
// Events are shared between subscribers: treat them as read-only.
//
// Errors: VALIDATION_ERROR for an unknown type (field types[i]), NOT_FOUND
// for an afterEventID that is not t's.
func (b *Broker) Subscribe(ctx context.Context, t tenant.Tenant, types []string, afterEventID string) (<-chan *ent.Event, error) {
	var f apperr.Fields
	var set map[string]struct{}
	if len(types) > 0 {
		set = make(map[string]struct{}, len(types))
		for i, typ := range types {
			if !hookwire.ValidEventName(typ) {
				f.Add(fmt.Sprintf("types[%d]", i), "must be one of %s", strings.Join(hookwire.EventTypes, ", "))
			}
			set[typ] = struct{}{}
		}
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	from := int64(-1)
	if afterEventID != "" {
		ids, err := b.db.Reader().Event.Query().Where(event.EventID(afterEventID)).IDs(tenant.With(ctx, t))
		if err != nil {
			return nil, store.Classify(err)
		}
		if len(ids) == 0 {
			return nil, apperr.New(apperr.NotFound, "no event with id %q", afterEventID)
		}
		from = ids[0]
	}
	select {
	case <-b.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &sub{t: t, types: set, ch: make(chan *ent.Event, b.cfg.Buffer), ctx: sctx, cancel: cancel, after: from}
	if b.cfg.Keys.Of != nil {
		s.key = b.cfg.Keys.Of(ctx)
	}
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		cancel()
		return nil, apperr.New(apperr.Unavailable, "the service is shutting down; reconnect")
	}
	s.notify = ready.Take(ctx)
	m := b.subs[t]
	if m == nil {
		m = map[*sub]struct{}{}
		b.subs[t] = m
	}
	m[s] = struct{}{}
	b.n++
	low := b.low
	if from < 0 {
		s.live = true
	} else {
		s.running = true
		s.replaying = true
	}
	b.mu.Unlock()
	context.AfterFunc(sctx, func() { b.remove(s) })
	if from >= 0 {
		go b.pump(s, true, from, low)
	}
	return s.ch, nil
}

// remove ends s (its context is done).
func (b *Broker) remove(s *sub) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m := b.subs[s.t]; m != nil {
		if _, ok := m[s]; ok {
			delete(m, s)
			b.n--
			if len(m) == 0 {
				delete(b.subs, s.t)
			}
		}
	}
	s.closed = true
	s.missed = nil
	if !s.running && !s.chClosed {
		s.closeCh()
	}
}

// closeCh closes s's channel; the caller holds Broker.mu.
func (s *sub) closeCh() {
	s.chClosed = true
	close(s.ch)
	s.notified()
}

// notified tells the consumer that ch holds one more event or is closed.
func (s *sub) notified() {
	if s.notify != nil {
		s.notify()
	}
}

// send blocks until s takes ev or ends.
func (b *Broker) send(s *sub, ev *ent.Event) bool {
	select {
	case s.ch <- ev:
		s.notified()
		b.streamed.Add(1)
		return true
	case <-s.ctx.Done():
		return false
	}
}

// pumpEnded marks the pump gone; the channel closes if s has ended.
func (b *Broker) pumpEnded(s *sub) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s.running = false
	if s.closed && !s.chClosed {
		s.closeCh()
	}
}

// deliverLocked hands ev to s without blocking.
func (b *Broker) deliverLocked(s *sub, ev *ent.Event) {
	if s.closed || s.dropped || ev.ID <= s.after {
		return
	}
	if len(b.late) > 0 && b.lateLocked(s, ev) {
		return
	}
	if s.live {
		select {
		case s.ch <- ev:
			s.notified()
			b.streamed.Add(1)
		default:
			// Full: a pump takes over until s has caught up.
			s.live = false
			s.running = true
			s.missed = append(s.missed, ev)
			go b.pump(s, false, 0, 0)
		}
		return
	}
	if len(s.missed) >= b.cfg.Backlog {
		s.dropped = true
		s.missed = nil
		b.cfg.Log.Warn("event subscriber too slow; closing it (it may resume with after)",
			"merchant", s.t.MerchantID, "mode", s.t.Mode)
		s.cancel()
		return
	}
	s.missed = append(s.missed, ev)
}
