package metrics

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"merchantpay/ent"
	"merchantpay/ent/emailnotification"
	"merchantpay/ent/event"
	"merchantpay/ent/eventfanout"
	"merchantpay/ent/predicate"
	"merchantpay/ent/transaction"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// Pipeline reads the money pipeline's backlog from the database when
// /metrics is scraped: work waiting on a worker is what an on-call engineer
// alerts on (a payout stuck pending, an outbox that stopped draining). Each
// figure is one indexed statement (the outbox's two are one together); a
// scrape never waits longer than queryTimeout for them, and scrapes closer
// together than maxAge share one reading, so a busy scraper cannot add load
// to a busy database.
type Pipeline struct {
	db  *store.DB
	now func() time.Time

	mu    sync.Mutex
	at    time.Time
	last  []prometheus.Metric
	descs pipelineDescs
}

const (
	queryTimeout = 2 * time.Second
	maxAge       = 5 * time.Second
)

type pipelineDescs struct {
	outbox, outboxOldest, deliveries, emails, errors *prometheus.Desc
	// pending and oldest are by transaction type: a backlog's count and its
	// oldest member's age.
	pending, oldest map[string]*prometheus.Desc
}

// NewPipeline returns the collector of db's backlog.
func NewPipeline(db *store.DB, now func() time.Time) *Pipeline {
	return &Pipeline{db: db, now: now, descs: pipelineDescs{
		pending: map[string]*prometheus.Desc{
			"WITHDRAWAL": prometheus.NewDesc("payouts_pending",
				"Payouts accepted (balance debited) and not yet settled or failed by the rails.", nil, nil),
			"SWAP": prometheus.NewDesc("swaps_awaiting_settlement",
				"Swaps debited and waiting for their settlement time to credit the other currency.", nil, nil),
			"DEPOSIT": prometheus.NewDesc("crypto_pay_deposits_pending",
				"Crypto-pay checkouts opened and neither paid nor expired yet.", nil, nil),
		},
		oldest: map[string]*prometheus.Desc{
			"WITHDRAWAL": prometheus.NewDesc("payouts_oldest_pending_age_seconds",
				"Age of the oldest pending payout (0 when none is pending).", nil, nil),
			"SWAP": prometheus.NewDesc("swaps_oldest_awaiting_settlement_age_seconds",
				"Age of the oldest swap awaiting settlement (0 when none is).", nil, nil),
			"DEPOSIT": prometheus.NewDesc("crypto_pay_deposits_oldest_pending_age_seconds",
				"Age of the oldest pending crypto-pay checkout (0 when none is).", nil, nil),
		},
		outbox: prometheus.NewDesc("outbox_events_pending",
			"Events written but not yet fanned out to webhook deliveries and e-mails.", nil, nil),
		outboxOldest: prometheus.NewDesc("outbox_oldest_pending_age_seconds",
			"Age of the oldest event not yet fanned out (0 when none waits).", nil, nil),
		deliveries: prometheus.NewDesc("webhook_deliveries",
			"Webhook deliveries by state: pending (not yet attempted), retrying (failed at least once, another attempt scheduled), failed (gave up; redeliverable on demand).",
			[]string{"state"}, nil),
		emails: prometheus.NewDesc("emails_pending",
			"Notification e-mails queued for sending.", nil, nil),
		errors: prometheus.NewDesc("metrics_pipeline_read_errors",
			"1 when the last reading of the pipeline's backlog failed (the database did not answer in time); its figures are then absent.", nil, nil),
	}}
}

// Describe sends the descriptions of every figure.
func (p *Pipeline) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{p.descs.outbox, p.descs.outboxOldest, p.descs.deliveries, p.descs.emails, p.descs.errors} {
		ch <- d
	}
	for _, t := range pendingTypes {
		ch <- p.descs.pending[t]
		ch <- p.descs.oldest[t]
	}
}

// Collect reads the backlog (or reuses a reading younger than maxAge).
func (p *Pipeline) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.last == nil || now.Sub(p.at) >= maxAge {
		ctx, cancel := context.WithTimeout(tenant.System(context.Background()), queryTimeout)
		ms, err := p.read(ctx, now)
		cancel()
		failed := 0.0
		if err != nil {
			ms, failed = nil, 1
		}
		p.last = append(ms, prometheus.MustNewConstMetric(p.descs.errors, prometheus.GaugeValue, failed))
		p.at = now
	}
	for _, m := range p.last {
		ch <- m
	}
}

type predicateDelivery = predicate.WebhookDelivery

// createdAt is a row's creation time, read alone.
type createdAt struct {
	CreatedAt time.Time `json:"created_at"`
}

// pendingTypes are the transaction types whose pending rows a worker
// carries on.
var pendingTypes = []string{"WITHDRAWAL", "SWAP", "DEPOSIT"}

func (p *Pipeline) read(ctx context.Context, now time.Time) ([]prometheus.Metric, error) {
	c := p.db.Reader()
	var out []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	ageOf := func(rows []createdAt) float64 {
		if len(rows) == 0 || rows[0].CreatedAt.IsZero() {
			return 0
		}
		return max(0, now.Sub(rows[0].CreatedAt).Seconds())
	}

	// Work a worker will pick up has next_run_at set: that partial index
	// serves these without reading settled rows. (The oldest is read as a
	// row, not as MIN(created_at): SQLite would hand the aggregate back as
	// text.)
	for _, t := range pendingTypes {
		q := c.Transaction.Query().Where(transaction.NextRunAtNotNil(), transaction.StatusEQ("pending"), transaction.Type(t))
		n, err := q.Clone().Count(ctx)
		if err != nil {
			return nil, err
		}
		var oldest []createdAt
		if n > 0 {
			if err := q.Order(ent.Asc(transaction.FieldCreatedAt)).Limit(1).
				Select(transaction.FieldCreatedAt).Scan(ctx, &oldest); err != nil {
				return nil, err
			}
		}
		gauge(p.descs.pending[t], float64(n))
		gauge(p.descs.oldest[t], ageOf(oldest))
	}

	// The outbox's backlog is the fan-out queue; its oldest is the event of
	// the lowest queued id.
	n, oldestEvent, err := outboxBacklog(ctx, c)
	if err != nil {
		return nil, err
	}
	gauge(p.descs.outbox, float64(n))
	gauge(p.descs.outboxOldest, ageOf(oldestEvent))

	for _, s := range []struct {
		state string
		where []predicateDelivery
	}{
		{"pending", []predicateDelivery{webhookdelivery.Status("pending"), webhookdelivery.RunAttempts(0)}},
		{"retrying", []predicateDelivery{webhookdelivery.Status("pending"), webhookdelivery.RunAttemptsGT(0)}},
		{"failed", []predicateDelivery{webhookdelivery.Status("failed")}},
	} {
		n, err := c.WebhookDelivery.Query().Where(s.where...).Count(ctx)
		if err != nil {
			return nil, err
		}
		gauge(p.descs.deliveries, float64(n), s.state)
	}

	emails, err := c.EmailNotification.Query().Where(emailnotification.Status("pending")).Count(ctx)
	if err != nil {
		return nil, err
	}
	gauge(p.descs.emails, float64(emails))
	return out, nil
}

// outboxQuery reads the outbox's backlog, the fan-out queue, in one
// statement: how many events it holds and, on its one row, the creation
// time of the event of the lowest queued id, read through the queue's key
// and the events' key. Every queued id has its event: the queue row is
// written with it, and events are never deleted. An empty queue gives no
// row. The time is read as a column, not through a subquery, for SQLite
// to hand it back as a time.
var outboxQuery = "SELECT (SELECT count(*) FROM " + eventfanout.Table + "), e." + event.FieldCreatedAt +
	" FROM " + eventfanout.Table + " q JOIN " + event.Table + " e ON e." + event.FieldID + " = q." + eventfanout.FieldID +
	" ORDER BY q." + eventfanout.FieldID + " LIMIT 1"

// outboxBacklog is how many events wait for fan-out and, when one does,
// the creation time of the first.
func outboxBacklog(ctx context.Context, c *ent.Client) (int, []createdAt, error) {
	rows, err := c.QueryContext(ctx, outboxQuery)
	if err != nil {
		return 0, nil, err
	}
	defer rows.Close()
	var n int
	var oldest []createdAt
	if rows.Next() {
		var at time.Time
		if err := rows.Scan(&n, &at); err != nil {
			return 0, nil, err
		}
		oldest = []createdAt{{CreatedAt: at}}
	}
	return n, oldest, rows.Err()
}
