package mail

import (
	"context"
	"log/slog"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/emailnotification"
	"merchantpay/ent/event"
	"merchantpay/ent/merchant"
	"merchantpay/ent/predicate"
	"merchantpay/internal/clock"
	"merchantpay/internal/jobs"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/webhook"
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
}

// Mailer queues notification e-mails and sends them.
type Mailer struct {
	db    *store.DB
	clock clock.Clock
	cfg   Config
	from  string
	owner string
	// send is cfg.SMTP.Send, or nil without SMTP.
	send  func(ctx context.Context, to string, msg []byte) error
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
		cfg.Schedule, _ = webhook.ParseSchedule(webhook.DefaultSchedule)
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
		m.send = cfg.SMTP.Send
	}
	return m
}

// Enqueue keeps the e-mail about ev, in the transaction carried by ctx (the
// dispatcher's fan-out), when ev's type notifies. It is safe to call twice.
// ev.Payload may be nil (the dispatcher's fan-out does not read payloads):
// it is then read here, in the same query as the merchant.
func (m *Mailer) Enqueue(ctx context.Context, ev *ent.Event) error {
	if !Notifies(ev.Type) {
		return nil
	}
	c := m.db.Client(ctx)
	mer, payload, err := m.recipient(ctx, ev)
	if err == nil && mer == nil {
		// Nobody to write to; failing would hold up every later event.
		m.cfg.Log.Error("e-mail not queued: the event's merchant does not exist", "event", ev.EventID, "merchant", ev.MerchantID)
		return nil
	}
	if err != nil {
		return err
	}
	if payload != nil {
		withPayload := *ev
		withPayload.Payload = payload
		ev = &withPayload
	}
	subject, body := Compose(ev, mer.Name)
	now := m.clock.Now()
	store.AfterCommit(ctx, m.Wake)
	return c.EmailNotification.Create().
		SetID("eml_" + uuid.NewString()).SetMerchantID(ev.MerchantID).SetMode(ev.Mode).
		SetEventID(ev.EventID).SetEventType(ev.Type).SetToAddress(mer.Email).
		SetSubject(subject).SetBody(body).SetStatus(StatusPending).
		SetNextAttemptAt(now).SetCreatedAt(now).SetUpdatedAt(now).
		OnConflictColumns(emailnotification.FieldEventID).DoNothing().Exec(ctx)
}

// recipient reads ev's merchant and, when ev came without it, ev's payload
// (nil otherwise), in one query; the merchant is nil when it does not exist.
func (m *Mailer) recipient(ctx context.Context, ev *ent.Event) (*ent.Merchant, []byte, error) {
	c := m.db.Client(ctx)
	if ev.Payload != nil {
		mer, err := c.Merchant.Get(ctx, ev.MerchantID)
		if ent.IsNotFound(err) {
			return nil, nil, nil
		}
		return mer, nil, err
	}
	d := sql.Dialect(m.db.Dialect)
	mt, et := sql.Table(merchant.Table).As("m"), sql.Table(event.Table).As("e")
	query, args := d.Select(mt.C(merchant.FieldName), mt.C(merchant.FieldEmail), et.C(event.FieldPayload)).
		From(mt).Join(et).On(et.C(event.FieldMerchantID), mt.C(merchant.FieldID)).
		Where(sql.And(sql.EQ(mt.C(merchant.FieldID), ev.MerchantID), sql.EQ(et.C(event.FieldID), ev.ID))).
		Query()
	rows, err := c.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, nil, err
		}
		return nil, nil, nil
	}
	mer := &ent.Merchant{ID: ev.MerchantID}
	var payload []byte
	if err := rows.Scan(&mer.Name, &mer.Email, &payload); err != nil {
		return nil, nil, err
	}
	return mer, payload, rows.Close()
}

// Run sends queued e-mails until ctx ends.
func (m *Mailer) Run(ctx context.Context) {
	sys := tenant.System(ctx)
	work := context.WithoutCancel(sys)
	tick := time.NewTicker(m.cfg.PollInterval)
	defer tick.Stop()
	for {
		for ctx.Err() == nil {
			rows, err := m.claim(sys)
			if err != nil {
				if ctx.Err() == nil {
					m.cfg.Log.Warn("claiming e-mails failed", "err", err)
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
	// kept: the e-mail was kept, not sent (no SMTP): the same update for
	// every such outcome, so they are recorded together.
	kept bool
}

// processAll sends the claimed e-mails one by one, then records their
// outcomes in one database transaction (see jobs.InBatchAll: should it
// fail, each is recorded on its own).
func (m *Mailer) processAll(ctx context.Context, rows []*ent.EmailNotification) {
	outs := make([]outcome, len(rows))
	for i, e := range rows {
		outs[i] = outcome{e: e, set: m.process(ctx, e), kept: m.send == nil}
	}
	for i, err := range jobs.InBatchAll(ctx, m.db, outs, m.finishAll) {
		if err != nil {
			m.cfg.Log.Error("recording e-mail outcome failed", "email", outs[i].e.ID, "err", err)
		}
	}
}

// process sends one claimed e-mail (outside any transaction) and returns
// how to record the outcome; without SMTP it logs the message and keeps it.
func (m *Mailer) process(ctx context.Context, e *ent.EmailNotification) func(*ent.EmailNotificationUpdate) {
	now := m.clock.Now()
	if m.send == nil {
		m.cfg.Log.Info("e-mail kept (SMTP_URL not set)", "to", e.ToAddress, "subject", e.Subject,
			"event", e.EventID, "merchant", e.MerchantID, "body", e.Body)
		return keep
	}
	msg := Render(m.from, e.ToAddress, e.Subject, e.Body, e.EventID+"@merchantpay", now)
	err := m.send(ctx, e.ToAddress, msg)
	attempts := e.Attempts + 1
	if err == nil {
		sentAt := m.clock.Now()
		return func(u *ent.EmailNotificationUpdate) {
			u.SetStatus(StatusSent).SetAttempts(attempts).SetSentAt(sentAt).ClearNextAttemptAt().ClearLastError()
		}
	}
	delay, again := webhook.NextAttempt(m.cfg.Schedule, attempts, m.cfg.Jitter)
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

// keep records an e-mail kept without SMTP.
func keep(u *ent.EmailNotificationUpdate) { u.SetStatus(StatusKept).ClearNextAttemptAt() }

// finishAll records outs in the transaction carried by ctx: the kept ones
// with one update, the others one by one (see finish).
func (m *Mailer) finishAll(ctx context.Context, outs []outcome) error {
	var kept []string
	for _, o := range outs {
		if o.kept {
			kept = append(kept, o.e.ID)
			continue
		}
		if err := m.finish(ctx, o); err != nil {
			return err
		}
	}
	if len(kept) == 0 {
		return nil
	}
	u := m.db.Client(ctx).EmailNotification.Update().
		Where(emailnotification.IDIn(kept...), emailnotification.LeaseOwner(m.owner)).
		ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(m.clock.Now())
	keep(u)
	return u.Exec(ctx)
}

// finish records o and releases the lease, if it is still ours, in the
// transaction carried by ctx.
func (m *Mailer) finish(ctx context.Context, o outcome) error {
	u := m.db.Client(ctx).EmailNotification.Update().
		Where(emailnotification.ID(o.e.ID), emailnotification.LeaseOwner(m.owner)).
		ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(m.clock.Now())
	o.set(u)
	_, err := u.Save(ctx)
	return err
}
