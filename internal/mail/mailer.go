package mail

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"merchantpay/ent"
	"merchantpay/ent/emailnotification"
	"merchantpay/ent/event"
	"merchantpay/ent/merchant"
	"merchantpay/ent/predicate"
	"merchantpay/internal/clock"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/jobs"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/tracing"
)

// E-mail states.
const (
	StatusPending = "pending"
	StatusSent    = "sent"
	// StatusKept: no SMTP is configured; the message stays in the database
	// and was written to the log.
	StatusKept   = "kept"
	StatusFailed = "failed"
)

const (
	batch        = 16
	defaultLease = 2 * time.Minute
)

// Config tunes the mailer; zero values take defaults.
type Config struct {
	// SMTP sends the messages; nil keeps and logs them instead.
	SMTP *SMTP
	// Schedule is the retry schedule of a failed send (the webhook one).
	Schedule     []time.Duration
	Jitter       func(time.Duration) time.Duration
	PollInterval time.Duration
	// Wake, when not nil, makes the mailer look at once.
	Wake <-chan struct{}
	Log  *slog.Logger
	// Tracer, when not nil, gives each send a span linked to the request
	// that made its event.
	Tracer trace.Tracer
}

// Mailer queues notification e-mails and sends them.
type Mailer struct {
	db    *store.DB
	clock clock.Clock
	cfg   Config
	from  string
	owner string
	nudge chan struct{}
}

// Wake makes the mailer look at once.
func (m *Mailer) Wake() {
	select {
	case m.nudge <- struct{}{}:
	default:
	}
}

// New returns the mailer.
func New(db *store.DB, c clock.Clock, cfg Config) *Mailer {
	if len(cfg.Schedule) == 0 {
		cfg.Schedule, _ = hookwire.ParseSchedule(hookwire.DefaultSchedule)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	m := &Mailer{db: db, clock: c, cfg: cfg, from: DefaultFrom, owner: "mail_" + uuid.NewString(), nudge: make(chan struct{}, 1)}
	if cfg.SMTP != nil {
		m.from = cfg.SMTP.From
	}
	return m
}

// Enqueue keeps the e-mail about ev in tx, as EnqueueAll does.
func (m *Mailer) Enqueue(ctx context.Context, tx *ent.Tx, ev *ent.Event) error {
	return m.EnqueueAll(ctx, tx, []*ent.Event{ev})
}

// EnqueueAll keeps the e-mails about evs whose types notify, in tx, the
// caller's transaction (the dispatcher's fan-out of a batch): one query for
// their merchants, one for the payloads the events came without (the
// fan-out does not read them), one insert. With SMTP they are pending for
// Run to send; without it they are written kept, and logged once tx
// commits. It is safe to call twice for an event. An event whose merchant
// does not exist queues nothing: failing would hold up every later event.
func (m *Mailer) EnqueueAll(ctx context.Context, tx *ent.Tx, evs []*ent.Event) error {
	c := tx.Client()
	var notify []*ent.Event
	merchantIDs := map[string]bool{}
	var bare []int64
	for _, ev := range evs {
		if !Notifies(ev.Type) {
			continue
		}
		notify = append(notify, ev)
		merchantIDs[ev.MerchantID] = true
		if ev.Payload == nil {
			bare = append(bare, ev.ID)
		}
	}
	if len(notify) == 0 {
		return nil
	}
	mers, err := c.Merchant.Query().Where(merchant.IDIn(slices.Collect(maps.Keys(merchantIDs))...)).
		Select(merchant.FieldID, merchant.FieldName, merchant.FieldEmail).All(ctx)
	if err != nil {
		return err
	}
	byID := make(map[string]*ent.Merchant, len(mers))
	for _, mer := range mers {
		byID[mer.ID] = mer
	}
	payloads := map[int64][]byte{}
	if len(bare) > 0 {
		withPayload, err := c.Event.Query().Where(event.IDIn(bare...)).Select(event.FieldID, event.FieldPayload).All(ctx)
		if err != nil {
			return err
		}
		for _, ev := range withPayload {
			payloads[ev.ID] = ev.Payload
		}
	}
	now := m.clock.Now()
	rows := make([]*ent.EmailNotificationCreate, 0, len(notify))
	var kept []keptMail
	for _, ev := range notify {
		mer := byID[ev.MerchantID]
		if mer == nil {
			m.cfg.Log.Error("e-mail not queued: the event's merchant does not exist", "event", ev.EventID, "merchant", ev.MerchantID)
			continue
		}
		if ev.Payload == nil {
			withPayload := *ev
			withPayload.Payload = payloads[ev.ID]
			ev = &withPayload
		}
		subject, body := Compose(ev, mer.Name)
		row := c.EmailNotification.Create().
			SetID("eml_" + uuid.NewString()).SetMerchantID(ev.MerchantID).SetMode(ev.Mode).
			SetEventID(ev.EventID).SetEventType(ev.Type).SetToAddress(mer.Email).
			SetSubject(subject).SetBody(body).SetCreatedAt(now).SetUpdatedAt(now).
			SetNillableTraceParent(ev.TraceParent)
		if m.cfg.SMTP == nil {
			// Nothing to send it with: it is written kept, with no lease
			// or attempt to record later, and logged once committed.
			row.SetStatus(StatusKept)
			kept = append(kept, keptMail{to: mer.Email, subject: subject, event: ev.EventID, merchant: ev.MerchantID, body: body})
		} else {
			row.SetStatus(StatusPending).SetNextAttemptAt(now)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil
	}
	if m.cfg.SMTP == nil {
		store.OnCommit(tx, func() {
			for _, k := range kept {
				k.log(m.cfg.Log)
			}
		})
	} else {
		store.OnCommit(tx, m.Wake)
	}
	return c.EmailNotification.CreateBulk(rows...).
		OnConflictColumns(emailnotification.FieldEventID).DoNothing().Exec(ctx)
}

// Run sends queued e-mails until ctx ends.
func (m *Mailer) Run(ctx context.Context) {
	sys := tenant.System(ctx)
	work := context.WithoutCancel(sys)
	tick := time.NewTicker(m.cfg.PollInterval)
	defer tick.Stop()
	fails := &jobs.Failures{Log: m.cfg.Log}
	for {
		for ctx.Err() == nil {
			rows, err := m.claim(sys)
			if err != nil {
				if ctx.Err() == nil {
					fails.Warn("claiming e-mails failed", err)
				}
				break
			}
			m.processAll(work, rows)
			if len(rows) < batch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-m.cfg.Wake:
		case <-m.nudge:
		case <-tick.C:
		}
	}
}

func due(now time.Time) []predicate.EmailNotification {
	return []predicate.EmailNotification{
		emailnotification.Status(StatusPending),
		emailnotification.NextAttemptAtLTE(now),
		emailnotification.Or(emailnotification.LeaseUntilIsNil(), emailnotification.LeaseUntilLT(now)),
	}
}

// claim leases due e-mails to this instance, as the webhook dispatcher
// does: SKIP LOCKED on PostgreSQL, a conditional update on SQLite.
func (m *Mailer) claim(ctx context.Context) ([]*ent.EmailNotification, error) {
	now := m.clock.Now()
	until := now.Add(defaultLease)
	rows, err := jobs.LeaseRows(ctx, m.db, jobs.RowLeaser[*ent.EmailNotification]{
		Candidates: func(ctx context.Context, c *ent.Client, lock bool) ([]*ent.EmailNotification, error) {
			q := c.EmailNotification.Query().Where(due(now)...).
				Order(ent.Asc(emailnotification.FieldNextAttemptAt), ent.Asc(emailnotification.FieldID)).Limit(batch)
			if lock {
				q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
			}
			return q.All(ctx)
		},
		ID: func(e *ent.EmailNotification) string { return e.ID },
		LeaseAll: func(ctx context.Context, c *ent.Client, ids []string) error {
			return c.EmailNotification.Update().Where(emailnotification.IDIn(ids...)).
				SetLeaseOwner(m.owner).SetLeaseUntil(until).Exec(ctx)
		},
		LeaseOne: func(ctx context.Context, c *ent.Client, id string) (bool, error) {
			k, err := c.EmailNotification.Update().Where(append(due(now), emailnotification.ID(id))...).
				SetLeaseOwner(m.owner).SetLeaseUntil(until).Save(ctx)
			return k == 1, err
		},
	})
	for _, e := range rows {
		o, u := m.owner, until
		e.LeaseOwner, e.LeaseUntil = &o, &u
	}
	return rows, err
}

// outcome is a claimed e-mail's new state, to be recorded.
type outcome struct {
	e   *ent.EmailNotification
	set func(*ent.EmailNotificationUpdate)
}

// processAll sends the claimed e-mails one by one over one SMTP
// connection, then records their outcomes in one database transaction
// (see jobs.InBatchAll: should it fail, each is recorded on its own).
func (m *Mailer) processAll(ctx context.Context, rows []*ent.EmailNotification) {
	b := &batchSender{smtp: m.cfg.SMTP}
	outs := make([]outcome, len(rows))
	for i, e := range rows {
		outs[i] = outcome{e: e, set: m.process(ctx, b, e)}
	}
	b.close()
	for i, err := range jobs.InBatchAll(ctx, m.db, outs, m.finishAll) {
		if err != nil {
			m.cfg.Log.Error("recording e-mail outcome failed", "email", outs[i].e.ID, "err", err)
		}
	}
}

// process sends one claimed e-mail (outside any transaction) and returns
// how to record the outcome; without SMTP it logs the message and keeps it.
func (m *Mailer) process(ctx context.Context, b *batchSender, e *ent.EmailNotification) func(*ent.EmailNotificationUpdate) {
	now := m.clock.Now()
	if m.cfg.SMTP == nil {
		keptMail{to: e.ToAddress, subject: e.Subject, event: e.EventID, merchant: e.MerchantID, body: e.Body}.log(m.cfg.Log)
		return keep
	}
	msg := Render(m.from, e.ToAddress, e.Subject, e.Body, e.EventID+"@merchantpay", now)
	err := m.tracedSend(ctx, b, e, msg)
	attempts := e.Attempts + 1
	if err == nil {
		sentAt := m.clock.Now()
		return func(u *ent.EmailNotificationUpdate) {
			u.SetStatus(StatusSent).SetAttempts(attempts).SetSentAt(sentAt).ClearNextAttemptAt().ClearLastError()
		}
	}
	delay, again := hookwire.NextAttempt(m.cfg.Schedule, attempts, m.cfg.Jitter)
	if again {
		m.cfg.Log.Warn("e-mail not sent; will retry", "to", e.ToAddress, "event", e.EventID, "in", delay, "err", err)
	} else {
		m.cfg.Log.Error("e-mail not sent after every retry; kept in the database", "to", e.ToAddress,
			"event", e.EventID, "subject", e.Subject, "err", err)
	}
	next := m.clock.Now().Add(delay)
	return func(u *ent.EmailNotificationUpdate) {
		u.SetAttempts(attempts).SetLastError(err.Error())
		if again {
			u.SetNextAttemptAt(next)
		} else {
			u.SetStatus(StatusFailed).ClearNextAttemptAt()
		}
	}
}

// keptMail is an e-mail kept without SMTP, as its log line shows it.
type keptMail struct{ to, subject, event, merchant, body string }

func (k keptMail) log(l *slog.Logger) {
	l.Info("e-mail kept (SMTP_URL not set)", "to", k.to, "subject", k.subject,
		"event", k.event, "merchant", k.merchant, "body", k.body)
}

// keep records an e-mail kept without SMTP: one queued while SMTP was set
// and found pending after a restart without it.
func keep(u *ent.EmailNotificationUpdate) { u.SetStatus(StatusKept).ClearNextAttemptAt() }

// finishAll records outs in tx. Without SMTP every e-mail was kept, the
// same update for all: one for the batch; otherwise one each (see finish).
func (m *Mailer) finishAll(ctx context.Context, tx *ent.Tx, outs []outcome) error {
	if m.cfg.SMTP == nil {
		ids := make([]string, len(outs))
		for i, o := range outs {
			ids[i] = o.e.ID
		}
		u := m.release(tx, ids...)
		keep(u)
		return u.Exec(ctx)
	}
	for _, o := range outs {
		if err := m.finish(ctx, tx, o); err != nil {
			return err
		}
	}
	return nil
}

// finish records o and releases the lease, if it is still ours, in tx.
func (m *Mailer) finish(ctx context.Context, tx *ent.Tx, o outcome) error {
	u := m.release(tx, o.e.ID)
	o.set(u)
	_, err := u.Save(ctx)
	return err
}

// release is the update of the e-mails ids that ends their lease, if it is
// still ours; the caller adds the outcome.
func (m *Mailer) release(tx *ent.Tx, ids ...string) *ent.EmailNotificationUpdate {
	return tx.Client().EmailNotification.Update().
		Where(emailnotification.IDIn(ids...), emailnotification.LeaseOwner(m.owner)).
		ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(m.clock.Now())
}

// tracedSend sends msg in a span of its own when the mailer traces.
func (m *Mailer) tracedSend(ctx context.Context, b *batchSender, e *ent.EmailNotification, msg []byte) error {
	if m.cfg.Tracer == nil {
		return b.send(ctx, e.ToAddress, msg)
	}
	parent := ""
	if e.TraceParent != nil {
		parent = *e.TraceParent
	}
	ctx, span := m.cfg.Tracer.Start(ctx, "email", append(tracing.Link(parent), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("email.event_type", e.EventType)))...)
	defer span.End()
	err := b.send(ctx, e.ToAddress, msg)
	if err != nil {
		span.SetStatus(codes.Error, "not sent")
	}
	return err
}
