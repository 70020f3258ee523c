package server

import (
	"context"

	"merchantpay/internal/broker"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/mail"
	"merchantpay/internal/merchants"
	"merchantpay/internal/webhooks"
	"merchantpay/server/gqlws"
)

// setupEvents wires what carries outbox events out: webhook endpoints and the
// dispatcher, e-mail, and the subscription broker, all woken after local
// commits and, on PostgreSQL, other instances' commits. lookup is how webhook
// hosts are looked up (zero: the system's resolver, the default bound).
func (a *App) setupEvents(lookup hookwire.Lookup) error {
	cfg := a.Config
	schedule, err := hookwire.ParseSchedule(cfg.WebhookRetrySchedule)
	if err != nil {
		return err
	}
	var smtp *mail.SMTP
	if cfg.SMTPURL != "" {
		if smtp, err = mail.ParseURL(cfg.SMTPURL); err != nil {
			return err
		}
	}
	jitter := hookwire.NewJitter(nil)

	a.Signal = broker.NewSignal(a.DB, cfg.DatabaseURL, a.Log)
	a.Outbox.OnCommit(a.Signal.Committed)
	a.Webhooks = webhooks.New(a.DB, a.Clock, cfg.WebhookAllowPrivate, a.Signal.Committed)
	a.Webhooks.Lookup = lookup
	a.Mailer = mail.New(a.DB, a.Clock, mail.Config{
		SMTP: smtp, Schedule: schedule, Jitter: jitter, PollInterval: cfg.EventsPollInterval, Log: a.Log,
		Tracer: a.workerTracer(),
	})
	a.Dispatcher = webhooks.NewDispatcher(a.DB, a.Clock, webhooks.DispatcherConfig{
		Schedule: schedule, Jitter: jitter, AllowPrivate: cfg.WebhookAllowPrivate, Resolver: lookup.Resolver,
		PollInterval: cfg.EventsPollInterval, Wake: a.Signal.Register(), FanOut: a.Mailer.EnqueueAll, Log: a.Log,
		Observe: a.Metrics.ObserveDelivery, Tracer: a.workerTracer(),
	})
	a.Broker = broker.New(a.DB, broker.Config{PollInterval: cfg.EventsPollInterval, Wake: a.Signal.Register(), Log: a.Log,
		// A subscriber whose key was rolled gets no more events, and its
		// connection is closed.
		Keys: broker.KeyCheck{
			Of: func(ctx context.Context) string {
				p, _ := merchants.PrincipalFrom(ctx)
				return p.KeyHash
			},
			Live: a.Merchants.KeysLive,
			Revoked: func(ctx context.Context) {
				gqlws.Close(ctx, keyRolled.Code, keyRolled.Reason)
			},
		}})
	a.workers = append(a.workers,
		Worker{Name: "event-signal", Run: a.Signal.Run},
		Worker{Name: "webhook-dispatcher", Run: a.Dispatcher.Run},
		Worker{Name: "mailer", Run: a.Mailer.Run},
		Worker{Name: "event-broker", Run: a.Broker.Run},
	)
	return nil
}
