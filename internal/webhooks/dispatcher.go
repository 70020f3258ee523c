package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	"go.opentelemetry.io/otel/trace"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/predicate"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/ent/webhookendpoint"
	"merchantpay/internal/clock"
	"merchantpay/internal/jobs"
	"merchantpay/internal/jsonx"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/webhook"
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
	// Jitter moves each retry delay (webhook.NewJitter); nil for none.
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
	// Timeout bounds one attempt (CONTRACT 6: 10 s).
	Timeout time.Duration
	// Concurrency is the number of attempts in flight at once.
	Concurrency int
	// Wake, when not nil, makes the dispatcher look at once: the outbox
	// committed events here or on another instance.
	Wake <-chan struct{}
	// FanOut, when not nil, runs for every batch of new events inside the
	// transaction that creates their deliveries (the e-mail queue). The
	// events have every field but Payload, which is nil: fan-out does not
	// read the payloads, most hooks' events do not need them, and a hook
	// that does reads them.
	FanOut func(ctx context.Context, evs []*ent.Event) error
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
		cfg.Schedule, _ = webhook.ParseSchedule(webhook.DefaultSchedule)
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
		client: newClient(webhook.Dialer{AllowPrivate: cfg.AllowPrivate, Resolver: cfg.Resolver, HandshakeTimeout: cfg.Timeout},
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

// Run fans out and delivers until ctx ends, then waits for the attempts in
// flight (each bounded by Timeout) so none is cut off half recorded.
//
// Three stages run side by side so that none waits for another: fan-out
// (when woken, by new events here or elsewhere, and at every poll), a
// claimer that leases due deliveries ahead of need, and Concurrency senders
// taking the claimed deliveries from a queue and handing the outcomes to
// the recorders without waiting for them. The claimer keeps at most
// 2*Concurrency deliveries claimed and not yet recorded (one queue's worth
// beside the attempts in flight) and claims once a quarter of that is free (or
// none is left), so that claims stay few beside the deliveries they feed and
// a queued delivery waits at most one Timeout for a sender, well inside its
// lease. Deliveries still queued at shutdown are released at once instead of
// waiting for their lease to run out.
func (d *Dispatcher) Run(ctx context.Context) {
	sys := tenant.System(ctx)
	// Attempts outlive ctx so shutdown lets them finish and be recorded.
	work := context.WithoutCancel(sys)
	limit := 2 * d.cfg.Concurrency
	records := make(chan recordReq, limit)
	recorded := make(chan struct{})
	var rec sync.WaitGroup
	for range recorders {
		rec.Add(1)
		go func() { defer rec.Done(); d.recorder(work, records) }()
	}
	go func() { rec.Wait(); close(recorded) }()
	defer func() { close(records); <-recorded }()

	queue := make(chan claimedDelivery, limit)
	finished := make(chan struct{}, limit)
	fannedOut := make(chan struct{}, 1)
	var stages sync.WaitGroup
	stages.Add(1)
	go func() { defer stages.Done(); d.fanOutLoop(ctx, sys, fannedOut) }()
	for range d.cfg.Concurrency {
		stages.Add(1)
		go func() { defer stages.Done(); d.sender(ctx, work, queue, finished, records) }()
	}
	d.claimLoop(ctx, sys, limit, queue, finished, fannedOut)
	stages.Wait()
	close(queue)
	d.release(work, queue)
}

// fanOutLoop runs fan-out when woken and at every poll, at most once per
// wakeGap (every commit of an event wakes the dispatcher; under load one
// fan-out serves them all), and tells the claimer after each batch, so that
// a backlog's first deliveries are sent while the rest is fanned out, and
// after each run.
func (d *Dispatcher) fanOutLoop(ctx, sys context.Context, fannedOut chan<- struct{}) {
	tick := time.NewTicker(d.cfg.PollInterval)
	defer tick.Stop()
	fails := &jobs.Failures{Log: d.cfg.Log}
	for {
		tell := func() {
			select {
			case fannedOut <- struct{}{}:
			default:
			}
		}
		if err := d.fanOut(sys, tell); err != nil && ctx.Err() == nil {
			fails.Warn("webhook fan-out failed", err)
		}
		// Also when nothing was fanned out: a wake-up may be a redelivery
		// or another instance's deliveries.
		tell()
		select {
		case <-ctx.Done():
			return
		case <-time.After(wakeGap):
		}
		select {
		case <-ctx.Done():
			return
		case <-d.cfg.Wake:
		case <-d.nudge:
		case <-tick.C:
		}
	}
}

// claimLoop leases due deliveries into queue while fewer than limit are
// claimed and not yet recorded, until ctx ends, a quarter of limit at least
// (or whatever is due when nothing is outstanding). After a claim that
// found fewer than it asked for, it looks again only after a fan-out or a
// wake-up and at every poll (retries falling due), not at every finished
// attempt.
func (d *Dispatcher) claimLoop(ctx, sys context.Context, limit int, queue chan<- claimedDelivery, finished <-chan struct{}, fannedOut <-chan struct{}) {
	tick := time.NewTicker(d.cfg.PollInterval)
	defer tick.Stop()
	fails := &jobs.Failures{Log: d.cfg.Log}
	refill := max(1, limit/4)
	outstanding := 0
	look := true
	for {
		if free := limit - outstanding; look && (free >= refill || outstanding == 0) {
			claimed, err := d.claim(sys, free)
			if err != nil && ctx.Err() == nil {
				fails.Warn("claiming webhook deliveries failed", err)
			}
			for _, a := range claimed {
				queue <- a // never blocks: queue holds limit
			}
			outstanding += len(claimed)
			// Fewer than asked: nothing else is due until something changes.
			look = len(claimed) == free
		}
		select {
		case <-ctx.Done():
			return
		case <-finished:
			outstanding--
		drain:
			for {
				select {
				case <-finished:
					outstanding--
				default:
					break drain
				}
			}
		case <-fannedOut:
			look = true
		case <-tick.C:
			look = true
		}
	}
}

// sender makes the attempts of queued deliveries until ctx ends or the
// queue closes.
func (d *Dispatcher) sender(ctx, work context.Context, queue <-chan claimedDelivery, finished chan<- struct{}, records chan<- recordReq) {
	for {
		select {
		case <-ctx.Done():
			return
		case a, ok := <-queue:
			if !ok {
				return
			}
			d.attempt(work, a, records, func() { finished <- struct{}{} })
		}
	}
}

// release gives back the leases of deliveries claimed but not attempted, so
// that another instance (or the next start) sends them without waiting for
// the lease to run out.
func (d *Dispatcher) release(ctx context.Context, queue <-chan claimedDelivery) {
	var ids []string
	for a := range queue {
		ids = append(ids, a.dl.ID)
	}
	if len(ids) == 0 {
		return
	}
	err := d.db.Tx(ctx, func(ctx context.Context) error {
		return d.db.Client(ctx).WebhookDelivery.Update().
			Where(webhookdelivery.IDIn(ids...), webhookdelivery.LeaseOwner(d.owner)).
			ClearLeaseOwner().ClearLeaseUntil().Exec(ctx)
	})
	if err != nil {
		d.cfg.Log.Warn("webhook delivery: releasing leases failed", "deliveries", len(ids), "err", err)
	}
}

// fanOut turns new events into deliveries (and whatever FanOut adds), in
// batches, each in one transaction with the events' fanned_out flag;
// committed runs after each batch that had events.
func (d *Dispatcher) fanOut(ctx context.Context, committed func()) error {
	for {
		n := 0
		err := d.db.Tx(ctx, func(ctx context.Context) error {
			c := d.db.Client(ctx)
			q := c.Event.Query().Where(event.FannedOut(false)).Order(ent.Asc(event.FieldID)).Limit(fanOutBatch)
			if d.db.IsPostgres() {
				// Instances share the backlog instead of queueing on one row.
				q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
			}
			// Not the payloads: deliveries do not need them (a claim reads
			// them for the attempt), and FanOut reads one when it needs it.
			evs, err := q.Select(fanOutColumns...).All(ctx)
			if err != nil {
				return err
			}
			n = len(evs)
			if n == 0 {
				return nil
			}
			if d.db.IsPostgres() {
				// The rows are locked: one update marks the batch.
				ids := make([]int64, len(evs))
				for i, ev := range evs {
					ids[i] = ev.ID
				}
				if _, err := c.Event.Update().Where(event.IDIn(ids...)).SetFannedOut(true).Save(ctx); err != nil {
					return err
				}
			} else {
				// Conditional, so an event is fanned out once even where
				// rows cannot be locked (SQLite shared by two processes).
				kept := evs[:0]
				for _, ev := range evs {
					k, err := c.Event.Update().Where(event.ID(ev.ID), event.FannedOut(false)).SetFannedOut(true).Save(ctx)
					if err != nil {
						return err
					}
					if k == 1 {
						kept = append(kept, ev)
					}
				}
				evs = kept
			}
			endpoints := map[tenant.Tenant][]*ent.WebhookEndpoint{}
			now := d.clock.Now()
			var pairs []newDeliveryPair
			for _, ev := range evs {
				t := tenant.Tenant{MerchantID: ev.MerchantID, Mode: ev.Mode}
				eps, ok := endpoints[t]
				if !ok {
					eps, err = c.WebhookEndpoint.Query().Where(
						webhookendpoint.MerchantID(t.MerchantID), webhookendpoint.Mode(t.Mode),
						webhookendpoint.Enabled(true), webhookendpoint.DeletedAtIsNil()).All(ctx)
					if err != nil {
						return err
					}
					endpoints[t] = eps
				}
				for _, ep := range eps {
					if Matches(ep, ev.Type) {
						pairs = append(pairs, newDeliveryPair{ev, ep})
					}
				}
			}
			if d.cfg.FanOut != nil && len(evs) > 0 {
				if err := d.cfg.FanOut(ctx, evs); err != nil {
					return err
				}
			}
			// One insert for the batch's deliveries, ids not read back.
			return insertDeliveries(ctx, d.db, pairs, now)
		})
		if err == nil && n > 0 {
			committed()
		}
		if err != nil || n < fanOutBatch {
			return err
		}
	}
}

// fanOutColumns are the event columns fan-out reads: all but the payload.
var fanOutColumns = []string{
	event.FieldID, event.FieldMerchantID, event.FieldMode, event.FieldEventID, event.FieldType,
	event.FieldTransactionRef, event.FieldCreatedAt, event.FieldFannedOut, event.FieldTraceParent,
}

// due selects deliveries whose attempt is due and that nobody holds.
func due(now time.Time) []predicate.WebhookDelivery {
	return []predicate.WebhookDelivery{
		webhookdelivery.Status(StatusPending),
		webhookdelivery.NextAttemptAtLTE(now),
		webhookdelivery.Or(webhookdelivery.LeaseUntilIsNil(), webhookdelivery.LeaseUntilLT(now)),
	}
}

// claimedDelivery is a leased delivery with what its attempt needs, read
// for the whole claim at once. ep is nil when the endpoint is gone; ev nil
// when the event could not be read.
type claimedDelivery struct {
	dl *ent.WebhookDelivery
	ep *ent.WebhookEndpoint
	ev *ent.Event
}

// claim leases up to n due deliveries to this instance and reads what
// their attempts need: on PostgreSQL in one statement (claimPostgres), on
// SQLite through lease, then the endpoints and events of the whole claim
// with one query each.
func (d *Dispatcher) claim(ctx context.Context, n int) ([]claimedDelivery, error) {
	now := d.clock.Now()
	if d.db.IsPostgres() {
		claimed, err := claimPostgres(ctx, d.db, d.owner, now, now.Add(d.cfg.Lease), n)
		return claimed, store.Classify(err)
	}
	dls, err := d.lease(ctx, now, n)
	if err != nil || len(dls) == 0 {
		return nil, err
	}
	c := d.db.Client(ctx)
	// The endpoints and events of the whole claim, one query each.
	epIDs, evIDs := make([]string, 0, len(dls)), make([]string, 0, len(dls))
	for _, dl := range dls {
		epIDs = append(epIDs, dl.EndpointID)
		evIDs = append(evIDs, dl.EventID)
	}
	eps, err := c.WebhookEndpoint.Query().Where(webhookendpoint.IDIn(dedupe(epIDs)...)).All(ctx)
	if err != nil {
		return nil, err
	}
	evs, err := c.Event.Query().Where(event.EventIDIn(dedupe(evIDs)...)).All(ctx)
	if err != nil {
		return nil, err
	}
	epByID := make(map[string]*ent.WebhookEndpoint, len(eps))
	for _, ep := range eps {
		epByID[ep.ID] = ep
	}
	evByID := make(map[string]*ent.Event, len(evs))
	for _, ev := range evs {
		evByID[ev.EventID] = ev
	}
	out := make([]claimedDelivery, len(dls))
	for i, dl := range dls {
		out[i] = claimedDelivery{dl: dl, ep: epByID[dl.EndpointID], ev: evByID[dl.EventID]}
	}
	return out, nil
}

// lease leases up to n due deliveries and returns them as leased, on
// SQLite, through jobs.LeaseRows: each lease a conditional update checked
// by rows affected.
func (d *Dispatcher) lease(ctx context.Context, now time.Time, n int) ([]*ent.WebhookDelivery, error) {
	until := now.Add(d.cfg.Lease)
	dls, err := jobs.LeaseRows(ctx, d.db, jobs.RowLeaser[*ent.WebhookDelivery]{
		Candidates: func(ctx context.Context, c *ent.Client, lock bool) ([]*ent.WebhookDelivery, error) {
			q := c.WebhookDelivery.Query().Where(due(now)...).
				Order(ent.Asc(webhookdelivery.FieldNextAttemptAt), ent.Asc(webhookdelivery.FieldID)).Limit(n)
			if lock {
				q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
			}
			return q.All(ctx)
		},
		ID: func(dl *ent.WebhookDelivery) string { return dl.ID },
		LeaseAll: func(ctx context.Context, c *ent.Client, ids []string) error {
			return c.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...)).
				SetLeaseOwner(d.owner).SetLeaseUntil(until).Exec(ctx)
		},
		LeaseOne: func(ctx context.Context, c *ent.Client, id string) (bool, error) {
			k, err := c.WebhookDelivery.Update().Where(append(due(now), webhookdelivery.ID(id))...).
				SetLeaseOwner(d.owner).SetLeaseUntil(until).Save(ctx)
			return k == 1, err
		},
	})
	for _, dl := range dls {
		owner, u := d.owner, until
		dl.LeaseOwner, dl.LeaseUntil = &owner, &u
	}
	return dls, err
}

// Body is the webhook body of ev: {"id","event","created_at","data"}, data
// being the stored payload byte for byte.
func Body(ev *ent.Event) []byte {
	str := func(s string) []byte { b, _ := json.Marshal(s); return b }
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.Write(str(ev.EventID))
	b.WriteString(`,"event":`)
	b.Write(str(ev.Type))
	b.WriteString(`,"created_at":`)
	b.Write(str(jsonx.Time(ev.CreatedAt)))
	b.WriteString(`,"data":`)
	b.Write(ev.Payload)
	b.WriteString(`}`)
	return b.Bytes()
}

// attempt makes one attempt of a claimed delivery and hands its outcome to
// the recorders, without waiting for it to be recorded; finish runs once
// the delivery is done with (recorded, abandoned or left to its lease).
func (d *Dispatcher) attempt(ctx context.Context, a claimedDelivery, records chan<- recordReq, finish func()) {
	dl, ep, ev := a.dl, a.ep, a.ev
	recorded := false
	defer func() {
		if !recorded {
			finish()
		}
	}()
	switch {
	case ep == nil || ep.DeletedAt != nil:
		d.abandon(ctx, dl, "the endpoint was deleted")
		return
	case !ep.Enabled:
		d.abandon(ctx, dl, "the endpoint is disabled")
		return
	case ev == nil:
		d.cfg.Log.Warn("webhook delivery: its event was not found", "delivery", dl.ID, "event", dl.EventID)
		return // the lease runs out and the attempt is made again
	case dl.LeaseUntil != nil && d.clock.Now().Add(d.cfg.Timeout).After(*dl.LeaseUntil):
		// It waited too long in the queue: the attempt could outlast the
		// lease and run beside another instance's. The lease runs out and
		// the attempt is made then.
		return
	}
	out := d.tracedSend(ctx, dl, ep, ev)
	if d.cfg.Observe != nil {
		failure := ""
		if out.status == 0 {
			failure = out.err
		}
		d.cfg.Observe(out.status, failure, out.latency)
	}
	recorded = true
	records <- recordReq{dl: dl, ep: ep, out: out, done: func(err error) {
		if err != nil {
			d.cfg.Log.Error("webhook delivery: recording attempt failed", "delivery", dl.ID, "err", err)
		}
		finish()
	}}
}

// clean makes text storable in a text column (valid UTF-8, no NUL).
func clean(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// record stores the attempt and moves the delivery on: succeeded on 2xx;
// failed, and the endpoint disabled, on 410; otherwise the next retry, or
// failed once the schedule is spent. If a redelivery came in meanwhile (the
// generation moved), only the attempt is kept and the new run stands.
func (d *Dispatcher) record(ctx context.Context, dl *ent.WebhookDelivery, ep *ent.WebhookEndpoint, out outcome) error {
	return d.db.Tx(ctx, func(ctx context.Context) error { return d.recordIn(ctx, dl, ep, out) })
}

// recordIn is record's work, in the transaction carried by ctx.
func (d *Dispatcher) recordIn(ctx context.Context, dl *ent.WebhookDelivery, ep *ent.WebhookEndpoint, out outcome) error {
	if err := insertAttempts(ctx, d.db, []recordReq{{dl: dl, ep: ep, out: out}}); err != nil {
		return err
	}
	return d.advance(ctx, dl, ep, out)
}

// advance moves the delivery on after an attempt (see record).
func (d *Dispatcher) advance(ctx context.Context, dl *ent.WebhookDelivery, ep *ent.WebhookEndpoint, out outcome) error {
	c := d.db.Client(ctx)
	now := d.clock.Now()
	upd := c.WebhookDelivery.Update().Where(webhookdelivery.ID(dl.ID))
	k, err := d.settle(upd, dl, out, now).Save(ctx)
	if err != nil {
		return err
	}
	if k == 0 {
		// Redelivered meanwhile: count the attempt, leave the new run.
		if _, err := c.WebhookDelivery.Update().Where(webhookdelivery.ID(dl.ID)).
			AddAttempts(1).Save(ctx); err != nil {
			return err
		}
		if _, err := c.WebhookDelivery.Update().Where(webhookdelivery.ID(dl.ID), webhookdelivery.LeaseOwner(d.owner)).
			ClearLeaseOwner().ClearLeaseUntil().Save(ctx); err != nil {
			return err
		}
	}
	if out.status == http.StatusGone {
		reason := fmt.Sprintf("disabled at %s: the receiver answered 410 Gone", jsonx.Time(now))
		if _, err := c.WebhookEndpoint.Update().
			Where(webhookendpoint.ID(ep.ID), webhookendpoint.Enabled(true)).
			SetEnabled(false).SetDisabledReason(reason).SetUpdatedAt(now).Save(ctx); err != nil {
			return err
		}
		d.cfg.Log.Info("webhook endpoint disabled after 410 Gone", "endpoint", ep.ID, "merchant", ep.MerchantID)
	}
	return nil
}

// settlement is a delivery's state after an attempt it still holds (see
// settle); nil fields are left as they are.
type settlement struct {
	attempts    int
	status      *string
	runAttempts *int
	next        *time.Time // nil: cleared
	completed   *time.Time
	lastStatus  *int    // nil: cleared (no answer)
	lastErr     *string // nil: cleared
}

// settlementOf is the move of dl after an attempt that saw out: succeeded
// on 2xx; failed on 410; otherwise the next retry, or failed once the
// schedule is spent.
func (d *Dispatcher) settlementOf(dl *ent.WebhookDelivery, out outcome, now time.Time) settlement {
	s := settlement{attempts: dl.Attempts + 1}
	if out.status != 0 {
		s.lastStatus = &out.status
	}
	if out.err != "" {
		s.lastErr = &out.err
	}
	end := func(status string) {
		s.status, s.completed = &status, &now
	}
	switch {
	case out.succeeded():
		end(StatusSucceeded)
	case out.status == http.StatusGone:
		end(StatusFailed)
	default:
		run := dl.RunAttempts + 1
		s.runAttempts = &run
		if delay, ok := webhook.NextAttempt(d.cfg.Schedule, run, d.cfg.Jitter); ok {
			next := now.Add(delay)
			s.next = &next
			d.wakeForRetry(delay)
		} else {
			end(StatusFailed)
		}
	}
	return s
}

// settle adds to upd, an update of deliveries in dl's state (owner,
// generation, attempts made) that saw out, the move after the attempt
// (settlementOf), and the end of the lease. The update leaves alone a
// delivery whose lease or generation moved on.
func (d *Dispatcher) settle(upd *ent.WebhookDeliveryUpdate, dl *ent.WebhookDelivery, out outcome, now time.Time) *ent.WebhookDeliveryUpdate {
	s := d.settlementOf(dl, out, now)
	upd.Where(webhookdelivery.LeaseOwner(d.owner), webhookdelivery.Generation(dl.Generation)).
		SetAttempts(s.attempts).ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(now).
		SetNillableStatus(s.status).SetNillableRunAttempts(s.runAttempts).SetNillableCompletedAt(s.completed)
	if s.lastStatus != nil {
		upd.SetLastStatusCode(*s.lastStatus)
	} else {
		upd.ClearLastStatusCode()
	}
	if s.lastErr != nil {
		upd.SetLastError(*s.lastErr)
	} else {
		upd.ClearLastError()
	}
	if s.next != nil {
		upd.SetNextAttemptAt(*s.next)
	} else {
		upd.ClearNextAttemptAt()
	}
	return upd
}

// errMoved rolls back a batch in which a delivery's lease or generation
// moved on (a redelivery, an expired lease): its outcomes are then
// recorded one by one, each with advance's care.
var errMoved = errors.New("webhook delivery moved on during its attempt")

// advanceSucceeded moves on, with one update per group of like deliveries
// instead of one each, the deliveries of batch whose attempt succeeded, and
// returns the others. Like deliveries (same generation, attempts made and
// answer) take the same update; should it miss one, the batch is rolled
// back with errMoved.
func (d *Dispatcher) advanceSucceeded(ctx context.Context, batch []recordReq) ([]recordReq, error) {
	type key struct{ generation, attempts, status int }
	groups := map[key][]recordReq{}
	var rest []recordReq
	for _, r := range batch {
		if !r.out.succeeded() {
			rest = append(rest, r)
			continue
		}
		k := key{r.dl.Generation, r.dl.Attempts, r.out.status}
		groups[k] = append(groups[k], r)
	}
	c := d.db.Client(ctx)
	now := d.clock.Now()
	for _, g := range groups {
		ids := make([]string, len(g))
		for i, r := range g {
			ids[i] = r.dl.ID
		}
		upd := c.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...))
		k, err := d.settle(upd, g[0].dl, g[0].out, now).Save(ctx)
		if err != nil {
			return nil, err
		}
		if k != len(ids) {
			return nil, errMoved
		}
	}
	return rest, nil
}

// recordBatch bounds the outcomes recorded in one transaction; recorders
// record batches side by side.
const (
	recordBatch = 64
	recorders   = 4
)

// recordReq is an attempt's outcome waiting to be recorded.
type recordReq struct {
	dl  *ent.WebhookDelivery
	ep  *ent.WebhookEndpoint
	out outcome
	// done is told the recording's result.
	done func(error)
}

// recorder records the outcomes of finished attempts, as many as are
// waiting (up to recordBatch) in one transaction: one commit for many
// deliveries instead of one each. Should that transaction fail, each
// outcome is recorded on its own, so one bad row costs the others nothing.
func (d *Dispatcher) recorder(ctx context.Context, in <-chan recordReq) {
	for first := range in {
		batch := []recordReq{first}
	more:
		for len(batch) < recordBatch {
			select {
			case r, ok := <-in:
				if !ok {
					break more
				}
				batch = append(batch, r)
			default:
				break more
			}
		}
		err := d.recordAll(ctx, batch)
		for _, r := range batch {
			if err != nil && len(batch) > 1 {
				r.done(d.record(ctx, r.dl, r.ep, r.out))
				continue
			}
			r.done(err)
		}
	}
}

// recordAll records batch in one transaction: on PostgreSQL in one
// statement (recordPostgres) unless an attempt saw 410 or a delivery comes
// twice; otherwise with recordInTx.
func (d *Dispatcher) recordAll(ctx context.Context, batch []recordReq) error {
	if d.db.IsPostgres() && !store.InTx(ctx) && oneStatement(batch) {
		return d.recordPostgres(ctx, batch, d.clock.Now())
	}
	return d.recordInTx(ctx, batch)
}

// recordInTx is recordAll's transaction: the attempts in one insert,
// successes with one update per group, the rest one by one.
func (d *Dispatcher) recordInTx(ctx context.Context, batch []recordReq) error {
	return d.db.Tx(ctx, func(ctx context.Context) error {
		if err := insertAttempts(ctx, d.db, batch); err != nil {
			return err
		}
		rest, err := d.advanceSucceeded(ctx, batch)
		if err != nil {
			return err
		}
		for _, r := range rest {
			if err := d.advance(ctx, r.dl, r.ep, r.out); err != nil {
				return err
			}
		}
		return nil
	})
}

// oneStatement reports whether recordPostgres may record batch: no 410
// (its endpoint is disabled too) and no delivery twice (one statement
// updates a row once).
func oneStatement(batch []recordReq) bool {
	seen := make(map[string]struct{}, len(batch))
	for _, r := range batch {
		if r.out.status == http.StatusGone {
			return false
		}
		if _, ok := seen[r.dl.ID]; ok {
			return false
		}
		seen[r.dl.ID] = struct{}{}
	}
	return true
}

// abandon ends a delivery whose endpoint is gone, without an attempt.
func (d *Dispatcher) abandon(ctx context.Context, dl *ent.WebhookDelivery, reason string) {
	now := d.clock.Now()
	err := d.db.Tx(ctx, func(ctx context.Context) error {
		_, err := d.db.Client(ctx).WebhookDelivery.Update().
			Where(webhookdelivery.ID(dl.ID), webhookdelivery.LeaseOwner(d.owner), webhookdelivery.Generation(dl.Generation)).
			SetStatus(StatusFailed).SetLastError(reason).ClearNextAttemptAt().SetCompletedAt(now).
			ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(now).Save(ctx)
		return err
	})
	if err != nil {
		d.cfg.Log.Warn("webhook delivery: abandoning failed", "delivery", dl.ID, "err", err)
	}
}
