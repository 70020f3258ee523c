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
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

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

// Streamed is how many events subscribers were handed.
func (b *Broker) Streamed() uint64 { return b.streamed.Load() }
