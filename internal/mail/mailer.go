package mail

import (
	"context"
	"log/slog"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/emailnotification"
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
func (m *Mailer) Enqueue(ctx context.Context, ev *ent.Event) error {
	if !Notifies(ev.Type) {
		return nil
	}
	c := m.db.Client(ctx)
	mer, err := c.Merchant.Get(ctx, ev.MerchantID)
	if ent.IsNotFound(err) {
		// Nobody to write to; failing would hold up every later event.
		m.cfg.Log.Error("e-mail not queued: the event's merchant does not exist", "event", ev.EventID, "merchant", ev.MerchantID)
		return nil
	}
	if err != nil {
		return err
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
			for _, r := range rows {
				m.process(work, r)
			}
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
	ids, err := jobs.Lease(ctx, m.db, jobs.Leaser{
		Candidates: func(ctx context.Context, c *ent.Client, lock bool) ([]string, error) {
			q := c.EmailNotification.Query().Where(due(now)...).
				Order(ent.Asc(emailnotification.FieldNextAttemptAt), ent.Asc(emailnotification.FieldID)).Limit(batch)
			if lock {
				q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
			}
			return q.IDs(ctx)
		},
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
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return m.db.Client(ctx).EmailNotification.Query().
		Where(emailnotification.IDIn(ids...), emailnotification.LeaseOwner(m.owner)).All(ctx)
}

// process sends one claimed e-mail (outside any transaction) and records
// the outcome; without SMTP it logs the message and keeps it.
func (m *Mailer) process(ctx context.Context, e *ent.EmailNotification) {
	now := m.clock.Now()
	if m.send == nil {
		m.cfg.Log.Info("e-mail kept (SMTP_URL not set)", "to", e.ToAddress, "subject", e.Subject,
			"event", e.EventID, "merchant", e.MerchantID, "body", e.Body)
		m.finish(ctx, e, func(u *ent.EmailNotificationUpdate) {
			u.SetStatus(StatusKept).ClearNextAttemptAt()
		})
		return
	}
	msg := Render(m.from, e.ToAddress, e.Subject, e.Body, e.EventID+"@merchantpay", now)
	err := m.send(ctx, e.ToAddress, msg)
	attempts := e.Attempts + 1
	if err == nil {
		m.finish(ctx, e, func(u *ent.EmailNotificationUpdate) {
			u.SetStatus(StatusSent).SetAttempts(attempts).SetSentAt(m.clock.Now()).ClearNextAttemptAt().ClearLastError()
		})
		return
	}
	delay, again := webhook.NextAttempt(m.cfg.Schedule, attempts, m.cfg.Jitter)
	if again {
		m.cfg.Log.Warn("e-mail not sent; will retry", "to", e.ToAddress, "event", e.EventID, "in", delay, "err", err)
	} else {
		m.cfg.Log.Error("e-mail not sent after every retry; kept in the database", "to", e.ToAddress,
			"event", e.EventID, "subject", e.Subject, "err", err)
	}
	m.finish(ctx, e, func(u *ent.EmailNotificationUpdate) {
		u.SetAttempts(attempts).SetLastError(err.Error())
		if again {
			u.SetNextAttemptAt(m.clock.Now().Add(delay))
		} else {
			u.SetStatus(StatusFailed).ClearNextAttemptAt()
		}
	})
}

// finish applies set and releases the lease, if it is still ours.
func (m *Mailer) finish(ctx context.Context, e *ent.EmailNotification, set func(*ent.EmailNotificationUpdate)) {
	err := m.db.Tx(ctx, func(ctx context.Context) error {
		u := m.db.Client(ctx).EmailNotification.Update().
			Where(emailnotification.ID(e.ID), emailnotification.LeaseOwner(m.owner)).
			ClearLeaseOwner().ClearLeaseUntil().SetUpdatedAt(m.clock.Now())
		set(u)
		_, err := u.Save(ctx)
		return err
	})
	if err != nil {
		m.cfg.Log.Error("recording e-mail outcome failed", "email", e.ID, "err", err)
	}
}
