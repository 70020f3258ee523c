package broker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"

	"merchantpay/internal/jobs"
	"merchantpay/internal/store"
)

// Channel is the PostgreSQL LISTEN/NOTIFY channel of outbox commits.
const Channel = "merchantpay_events"

// Signal tells this instance's workers (broker, dispatcher, mailer) that
// the outbox may hold something new: after a local commit (Committed, wired
// to Outbox.OnCommit) and, on PostgreSQL, when another instance committed
// (LISTEN). A wake-up carries nothing; the database stays the only source of
// truth, so a lost one costs at most a poll interval.
//
// NOTIFY is sent after commit, not inside the emitting transaction: inside,
// PostgreSQL would take its global notify lock at pre-commit and hold it
// through the commit's WAL flush, serialising the commits of every
// event-writing operation (the money hot path) on one lock. After commit
// it is one small statement off the hot path, coalesced across bursts;
// the price, a wake-up lost if the process dies between commit and NOTIFY,
// is covered by every instance's poll. NOTIFYs are at most one per
// notifyGap (a burst of commits is one wake-up for the others, who look at
// everything new anyway), and each carries this instance's id so that its
// own listener, which PostgreSQL also tells, does not wake it a second time.
type Signal struct {
	db  *store.DB
	dsn string
	log *slog.Logger
	// id tells this instance's NOTIFYs from the others'.
	id string

	mu     sync.Mutex
	chans  []chan struct{}
	notify chan struct{}
}

// NewSignal returns the signal; dsn is the PostgreSQL URL to LISTEN on
// (ignored on SQLite, where every writer is in this process).
func NewSignal(db *store.DB, dsn string, log *slog.Logger) *Signal {
	if log == nil {
		log = slog.Default()
	}
	return &Signal{db: db, dsn: dsn, log: log, id: uuid.NewString(), notify: make(chan struct{}, 1)}
}

// notifyGap is the least time between two NOTIFYs of one instance.
const notifyGap = 10 * time.Millisecond

// Register returns a channel that receives a value after outbox commits;
// wake-ups coalesce while the receiver is busy.
func (s *Signal) Register() <-chan struct{} {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	s.chans = append(s.chans, ch)
	s.mu.Unlock()
	return ch
}

// Committed reports a local commit of outbox rows (or deliveries): it wakes
// this instance and, on PostgreSQL, the others. It never blocks.
func (s *Signal) Committed() {
	s.wakeLocal()
	if s.db.IsPostgres() {
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
}

func (s *Signal) wakeLocal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.chans {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Run listens for other instances' commits and notifies them of ours, on
// PostgreSQL, until ctx ends. On SQLite there is nothing to do.
func (s *Signal) Run(ctx context.Context) {
	if !s.db.IsPostgres() {
		return
	}
	// The listener reconnects on its own while the database is gone,
	// failing at each attempt: said once per jobs.QuietPeriod, as the
	// other workers say it.
	fails := &jobs.Failures{Log: s.log}
	l := pq.NewListener(s.dsn, 50*time.Millisecond, 5*time.Second, func(ev pq.ListenerEventType, err error) {
		if err != nil && ctx.Err() == nil {
			if ev == pq.ListenerEventConnectionAttemptFailed {
				// Its own session, not the pool's: a failure to open it
				// is the database being unavailable, whatever it says.
				err = store.ConnectFailed(err)
			}
			fails.Warn("event listener connection", err)
		}
	})
	defer l.Close()
	go func() {
		if err := l.Listen(Channel); err != nil && ctx.Err() == nil {
			s.log.Error("LISTEN failed; other instances' events arrive by polling only", "err", err)
			return
		}
		// Anything committed before LISTEN took hold is found by looking now.
		s.wakeLocal()
	}()
	go s.notifyOthers(ctx)
	ping := time.NewTicker(60 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case n := <-l.Notify:
			// nil after a reconnect: notifications may have been lost, so
			// looking again is the right answer either way.
			if n != nil && n.Extra == s.id {
				continue // our own: this instance was woken at its commit
			}
			s.wakeLocal()
		case <-ping.C:
			// Detects a silently dead listener connection (pq's advice).
			go func() { _ = l.Ping() }()
		}
	}
}

// notifyOthers sends a NOTIFY after local commits, at most one per
// notifyGap, until ctx ends.
func (s *Signal) notifyOthers(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.notify:
		}
		nctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if _, err := s.db.SQL().ExecContext(nctx, "SELECT pg_notify($1, $2)", Channel, s.id); err != nil && ctx.Err() == nil {
			s.log.Warn("NOTIFY failed; other instances will find the events by polling", "err", err)
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-time.After(notifyGap):
		}
	}
}
