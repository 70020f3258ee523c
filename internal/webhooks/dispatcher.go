package webhooks

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"merchantpay/ent"
	"merchantpay/internal/clock"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/store"
)

// Defaults of DispatcherConfig.
const (
	DefaultPollInterval = time.Second
	DefaultLease        = time.Minute
	DefaultTimeout      = 10 * time.Second
	DefaultConcurrency  = 64
	// ResponseKeep is how much of an answer each attempt records.
	ResponseKeep = 1024

	fanOutBatch = 100
	// wakeGap is the least time between two fan-outs.
	wakeGap = 10 * time.Millisecond
	// drainLimit is how much more of an answer is read (and dropped) so the
	// connection can be reused.
	drainLimit = 64 << 10
	userAgent  = "MerchantPay-Webhooks/1.0"
)

// DispatcherConfig tunes the dispatcher; zero values take the defaults.
type DispatcherConfig struct {
	// Schedule is the retry schedule (WEBHOOK_RETRY_SCHEDULE).
	Schedule []time.Duration
	// Jitter moves each retry delay (hookwire.NewJitter); nil for none.
	Jitter func(time.Duration) time.Duration
	// AllowPrivate is WEBHOOK_ALLOW_PRIVATE: deliveries (in either mode)
	// may then go to loopback, private and other non-public addresses.
	AllowPrivate bool
	// Resolver looks receivers' host names up (nil: the system's); tests
	// replace it.
	Resolver *net.Resolver
	// PollInterval is how often due work is looked for without a wake-up
	// (retries falling due, events of other instances).
	PollInterval time.Duration
	// Lease is how long a claimed delivery stays this instance's; it must
	// outlast Timeout. A crashed instance's deliveries are free after it.
	Lease time.Duration
	// Timeout bounds one attempt (10 s by default).
	Timeout time.Duration
	// Concurrency is the number of attempts in flight at once.
	Concurrency int
	// Wake, when not nil, makes the dispatcher look at once: the outbox
	// committed events here or on another instance.
	Wake <-chan struct{}
	// FanOut, when not nil, runs for every batch of new events in tx,
	// the transaction that creates their deliveries (the e-mail queue).
	// The events have every field but Payload, which is nil: fan-out does
	// not read the payloads, most hooks' events do not need them, and a
	// hook that does reads them.
	FanOut func(ctx context.Context, tx *ent.Tx, evs []*ent.Event) error
	// Observe, when not nil, is told of every attempt: the receiver's
	// status (0 when no answer came), else the failure's class, and how
	// long it took (the metrics).
	Observe func(status int, failure string, took time.Duration)
	// Tracer, when not nil, gives each attempt a span linked to the
	// request that made its event.
	Tracer trace.Tracer
	Log    *slog.Logger
}

// Dispatcher fans outbox events out into deliveries and sends them.
type Dispatcher struct {
	db    *store.DB
	clock clock.Clock
	cfg   DispatcherConfig
	// owner names this instance in leases.
	owner string
	// client sends every attempt; unless AllowPrivate it refuses
	// non-public addresses at connect time.
	client *http.Client
	nudge  chan struct{}

	// retryMu guards retryAt, the earliest retry this instance scheduled
	// that its timer will wake it for (zero: none pending).
	retryMu sync.Mutex
	retryAt time.Time
}

// wakeForRetry makes the dispatcher look again when a retry it has just
// scheduled falls due (after delay), instead of at the next poll, up to a
// poll interval later: one timer for the earliest pending retry.
func (d *Dispatcher) wakeForRetry(delay time.Duration) {
	at := time.Now().Add(delay)
	d.retryMu.Lock()
	defer d.retryMu.Unlock()
	if !d.retryAt.IsZero() && !at.Before(d.retryAt) {
		return // an earlier wake-up is set; the poll takes care of later ones
	}
	d.retryAt = at
	time.AfterFunc(delay+5*time.Millisecond, func() { // past the stored time, whatever its rounding
		d.retryMu.Lock()
		if d.retryAt.Equal(at) {
			d.retryAt = time.Time{}
		}
		d.retryMu.Unlock()
		d.Wake()
	})
}

// NewDispatcher returns a dispatcher; run it with Run.
func NewDispatcher(db *store.DB, c clock.Clock, cfg DispatcherConfig) *Dispatcher {
	if len(cfg.Schedule) == 0 {
		cfg.Schedule, _ = hookwire.ParseSchedule(hookwire.DefaultSchedule)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Lease <= cfg.Timeout {
		cfg.Lease = max(DefaultLease, 3*cfg.Timeout)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Dispatcher{
		db: db, clock: c, cfg: cfg, owner: "dsp_" + uuid.NewString(),
		client: newClient(hookwire.Dialer{AllowPrivate: cfg.AllowPrivate, Resolver: cfg.Resolver, HandshakeTimeout: cfg.Timeout},
			cfg.Timeout, cfg.Concurrency),
		nudge: make(chan struct{}, 1),
	}
}

// Wake makes the dispatcher look for work at once.
func (d *Dispatcher) Wake() {
	select {
	case d.nudge <- struct{}{}:
	default:
	}
}
