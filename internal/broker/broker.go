// Package broker streams outbox events to live subscribers (the GraphQL
// subscription events(types, after)), on one instance and, through
// PostgreSQL LISTEN/NOTIFY wake-ups, across instances.
//
// The database is the only source of truth. One hub per instance reads the
// events table in id order after each wake-up (or poll) and hands each
// newly visible event once to the matching subscribers, without blocking:
// a subscriber is a buffered channel, not a goroutine, so idle subscribers
// cost about a kilobyte each (a consumer that passes a callback with package
// ready is told of every event, so it needs no goroutine either). A subscriber gets a goroutine only while it
// replays stored events (after) or works off a backlog because it reads
// slower than events come; one that falls Backlog events behind is closed,
// and can resume with after = the last id it saw.
//
// No gap, no duplicate: a subscriber joins the hub before it replays, so
// every event is either visible to its replay or seen by the hub afterwards
// (queued for it); ids it replayed that the hub may still hand over are
// remembered and skipped once. PostgreSQL can commit ids out of order, so
// the hub tracks the ids it skipped (gaps) and picks them up when their
// transaction commits; a gap still empty after GapTimeout is taken to be a
// rollback.
package broker

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/internal/apperr"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/ready"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// Defaults of Config.
const (
	DefaultPollInterval = time.Second
	DefaultBuffer       = 32
	DefaultBacklog      = 1024
	DefaultGapTimeout   = 2 * time.Minute

	pageSize = 200
	// maxGapRun bounds the ids tracked for one jump in the sequence; a
	// larger jump (a sequence reset by hand) is not waited for.
	maxGapRun = 10000
	// gapQueryMax bounds one gap look-up.
	gapQueryMax = 500
	// initWindow is how far below the newest id the hub, starting, looks for
	// ids still in flight.
	initWindow = 1000
	// wakeGap is the least time between two looks of the hub.
	wakeGap = 10 * time.Millisecond
)

// Config tunes the broker; zero values take the defaults.
type Config struct {
	// PollInterval is how often the hub looks without a wake-up.
	PollInterval time.Duration
	// Buffer is each subscriber's channel capacity.
	Buffer int
	// Backlog is how many events a subscriber may fall behind its buffer
	// before it is closed.
	Backlog int
	// GapTimeout is how long an id skipped in the sequence is waited for.
	GapTimeout time.Duration
	// Now reads the wall clock for GapTimeout: gaps are about real
	// transaction durations, not the business clock. Nil is time.Now.
	Now func() time.Time
	// Wake, when not nil, makes the hub look at once (Signal.Register).
	Wake <-chan struct{}
	Log  *slog.Logger

	// Keys, when set, checks a subscriber's credential before each event
	// it is handed, so that a rolled API key gets nothing more (rolling
	// voids the old key at once, open connections included).
	Keys KeyCheck
}

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

// Broker fans events out to subscribers.
type Broker struct {
	db    *store.DB
	cfg   Config
	ready chan struct{}
	nudge chan struct{}

	mu   sync.Mutex
	subs map[tenant.Tenant]map[*sub]struct{}
	n    int
	// low: every id ≤ low has been seen by the hub or given up on, so the
	// hub hands out only ids above it from now on.
	low int64
	// stopped is set when the hub ends; later subscribers are refused.
	stopped bool

	// streamed counts the events handed to subscribers.
	streamed atomic.Uint64

	// Hub state, owned by Run's goroutine.
	maxSeen int64
	gaps    map[int64]time.Time
}

// sub is one subscriber. Fields below ch are guarded by Broker.mu, except
// seen, which belongs to whoever feeds the subscriber: the pump goroutine
// while running, the hub while live.
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
	missed   []*ent.Event       // handed over by the hub while running
	seen     map[int64]struct{} // replayed ids the hub may still hand over
	// after is the id the subscriber resumed after: a hub still behind it
	// when the subscriber joined must not hand over what came before.
	after int64
}

func (s *sub) wants(typ string) bool {
	if s.types == nil {
		return true
	}
	_, ok := s.types[typ]
	return ok
}

// New returns a broker; run its hub with Run.
func New(db *store.DB, cfg Config) *Broker {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	if cfg.Backlog <= 0 {
		cfg.Backlog = DefaultBacklog
	}
	if cfg.GapTimeout <= 0 {
		cfg.GapTimeout = DefaultGapTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Broker{
		db: db, cfg: cfg, ready: make(chan struct{}), nudge: make(chan struct{}, 1),
		subs: map[tenant.Tenant]map[*sub]struct{}{}, gaps: map[int64]time.Time{},
	}
}

// Wake makes the hub look at once.
func (b *Broker) Wake() {
	select {
	case b.nudge <- struct{}{}:
	default:
	}
}

// Subscribers is the number of open subscriptions on this instance.
func (b *Broker) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// Subscribe streams t's events of the given types (nil or empty: all) until
// ctx ends. With afterEventID (an evt_ id of t's), it first replays every
// stored event after that one in id order, then goes live, with no gap and
// no duplicate. The channel closes when ctx ends, when the instance stops,
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
		ids, err := b.db.Client(ctx).Event.Query().Where(event.EventID(afterEventID)).IDs(tenant.With(ctx, t))
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

// Streamed is how many events subscribers were handed.
func (b *Broker) Streamed() uint64 { return b.streamed.Load() }

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
		q := b.db.Client(ctx).Event.Query().Where(event.IDGT(cursor))
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

// pumpEnded marks the pump gone; the channel closes if s has ended.
func (b *Broker) pumpEnded(s *sub) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s.running = false
	if s.closed && !s.chClosed {
		s.closeCh()
	}
}

// pruneLocked forgets remembered ids the hub can no longer hand over.
func (b *Broker) pruneLocked(s *sub) {
	for id := range s.seen {
		if id <= b.low {
			delete(s.seen, id)
		}
	}
	if len(s.seen) == 0 {
		s.seen = nil
	}
}

// deliverLocked hands ev to s without blocking.
func (b *Broker) deliverLocked(s *sub, ev *ent.Event) {
	if s.closed || s.dropped || ev.ID <= s.after {
		return
	}
	if s.live {
		if s.seen != nil {
			if _, dup := s.seen[ev.ID]; dup {
				delete(s.seen, ev.ID)
				return
			}
			b.pruneLocked(s)
		}
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

// Run is the hub: it looks for newly visible events on every wake-up and
// poll until ctx ends, then closes every subscription.
func (b *Broker) Run(ctx context.Context) {
	sys := tenant.System(ctx)
	tick := time.NewTicker(b.cfg.PollInterval)
	defer tick.Stop()
	for {
		err := b.start(sys)
		if err == nil {
			break
		}
		if ctx.Err() == nil {
			b.cfg.Log.Warn("event broker cannot read the outbox yet", "err", err)
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
			b.cfg.Log.Warn("event broker poll failed", "err", err)
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
	c := b.db.Client(ctx)
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
	c := b.db.Client(ctx)
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
			full, err := b.query(ctx, b.db.Client(ctx).Event.Query().Where(event.IDIn(ids...)), false)
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
