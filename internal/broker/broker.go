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
// and can resume with after = the last id it saw. The events held behind an
// id still in flight (below) are handed out back to back when it settles,
// and count toward Backlog like any other: a tenant with more than
// Buffer+Backlog events in that window has its subscribers closed (they
// resume with after, losing nothing).
//
// In id order, always: PostgreSQL can commit ids out of order (a
// transaction that drew a smaller id commits after one that drew a larger),
// so the hub tracks the ids missing below the largest it has seen (gaps)
// and holds back every event above the lowest open gap until each id below
// it has either shown up or is known never to come. Almost every gap fills
// before the hub's next look; for one still open then, the hub reads which
// transactions of this database are in flight (their transaction ids, from
// pg_stat_activity), and the id is known never to come once all of those
// have ended and it still is not visible (rolled back, or its session
// died); as a last resort, after GapTimeout. So an event waits only for
// transactions that drew an earlier id and are still in flight; a
// rolled-back one holds it up until the first poll after both the rollback
// and the gap's noticing (a rollback wakes nobody), so for at most one
// poll interval after the later of the two, and a transaction left open in this database (not in another database on the
// server) holds it until it ends or GapTimeout. An id given up on too early
// is still looked for (once per poll interval) until GapTimeout after it
// was noticed, and if it comes it is delivered late, out of id order, with
// a WARN, rather than lost. SQLite commits in id order (one writer): it has
// no gaps to wait for.
//
// No gap, no duplicate: the hub keeps low, the id below which everything
// has been handed out (or given up on), and moves it in the same critical
// section in which it hands out events. A subscriber joins the hub before
// it replays: it replays the stored events after its resume point up to
// the low it joined at, and gets every event above that from the hub
// (queued for it while it replays). Since nothing above an open gap is
// handed out, resuming after the last event seen misses nothing.
//
// Except for an id given up on that commits after all. That happens when
// its transaction drew it and held no PostgreSQL transaction id yet when
// the gap was judged (a statement whose first write comes after the draw),
// or is a prepared two-phase transaction (not listed as in flight), or
// stays open longer than GapTimeout. Committed within GapTimeout of the
// noticing, it reaches live subscribers late, after higher ids, with a WARN;
// committed later, it reaches none (a WARN says when a gap is given up at
// GapTimeout). Either way a subscriber not live when it comes, resuming
// with after above it, never gets it.
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
	// maxHeld bounds the events held back in memory behind an open gap;
	// newer ones are read once it settles.
	maxHeld = 10000
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
	// GapTimeout is how long, at most, an id skipped in the sequence is
	// waited for (and the events after it held back); on PostgreSQL a
	// rolled-back id is given up on much sooner, and a given-up id is still
	// looked for until then (delivered late if it comes).
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
	// low: every id ≤ low has been handed out or given up on, and every
	// id above it will be handed out by the hub, in id order.
	low int64
	// late: ids given up on that are still looked for, with when each was
	// noticed (late.go).
	late map[int64]time.Time
	// stopped is set when the hub ends; later subscribers are refused.
	stopped bool

	// streamed counts the events handed to subscribers.
	streamed atomic.Uint64

	// Hub state, owned by Run's goroutine. front is low's value as the hub
	// knows it; held are the events read above it, in id order, waiting for
	// the gaps below them.
	maxSeen int64
	front   int64
	gaps    map[int64]gap
	held    []heldEvent
	// lateLookedAt: when the ids given up on were last looked up;
	// lateWarned: when watching too many of them was last said (late.go).
	lateLookedAt, lateWarned time.Time
	// inFlightReads counts the reads of the transactions in flight (read
	// by tests while the hub runs).
	inFlightReads atomic.Uint64
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
		subs: map[tenant.Tenant]map[*sub]struct{}{}, gaps: map[int64]gap{}, late: map[int64]time.Time{},
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
