// Package metrics holds the service's Prometheus metrics: the RED metrics
// of every request (rate, errors, duration), the state of the money
// pipeline read from the database when scraped, and the counters the
// services keep as they work. Label values are bounded: route patterns,
// methods, statuses and error codes, never raw paths, references or
// merchant ids.
package metrics

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"merchantpay/internal/hookwire"
)

// Metrics is one instance's registry and the metrics it observes directly.
type Metrics struct {
	// Registry is what the admin listener's /metrics serves.
	Registry *prometheus.Registry

	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge

	deliveries       *prometheus.CounterVec
	deliveryDuration *prometheus.HistogramVec
	payoutsCompleted *prometheus.CounterVec
	ledgerChecks     *prometheus.CounterVec

	railsOnce sync.Once
	rails     *Rails
}

// latencyBuckets suit an API whose requests take milliseconds and whose
// deadlines are tens of seconds.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// New returns the metrics of one instance, with the Go runtime's and the
// process's own collectors registered.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_requests_total",
			Help: "Requests answered, by route pattern (REST route, GraphQL operation, WebSocket), method, status and error code (empty on success). A client that went away before the answer counts as status 499.",
		}, []string{"route", "method", "status", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer, by route pattern and method (a WebSocket counts until its upgrade).",
			Buckets: latencyBuckets,
		}, []string{"route", "method"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "http_requests_in_flight",
			Help: "Requests being served now (open WebSockets are counted by graphql_subscribers).",
		}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webhook_delivery_attempts_total",
			Help: "Webhook delivery attempts, by outcome: the receiver's status class (2xx, 3xx, 4xx, 5xx) or the failure's kind (timeout, connection_refused, ..., interrupted).",
		}, []string{"outcome"}),
		deliveryDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "webhook_delivery_duration_seconds",
			Help:    "Time a webhook receiver took to answer an attempt, by outcome.",
			Buckets: latencyBuckets,
		}, []string{"outcome"}),
		payoutsCompleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "payouts_completed_total",
			Help: "Payouts that reached a final state on this instance, by state (success, failed).",
		}, []string{"state"}),
		ledgerChecks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ledger_invariant_checks_total",
			Help: "Runs of the ledger invariant check, by result (ok, failed, error). Any failed run means money does not add up: page someone.",
		}, []string{"result"}),
	}
	reg.MustRegister(m.requests, m.duration, m.inFlight, m.deliveries, m.deliveryDuration, m.payoutsCompleted, m.ledgerChecks,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.zeroAlerted()
	return m
}

// The results of a ledger check, the values of ledger_invariant_checks_total's
// result label.
const (
	LedgerOK     = "ok"
	LedgerFailed = "failed"
	LedgerError  = "error"
)

// deliveryOutcomes are the values of webhook_delivery_attempts_total's
// outcome label that are not a failure's class (ObserveDelivery).
var deliveryOutcomes = []string{"2xx", "3xx", "4xx", "5xx", "error"}

// zeroAlerted makes the series that the documented alerts read with
// increase() or rate() exist at 0 from the start: a series that first
// appears with its first event shows no increase for it, so the alert
// would miss that event (a ledger check's first failure, above all).
func (m *Metrics) zeroAlerted() {
	for _, r := range []string{LedgerOK, LedgerFailed, LedgerError} {
		m.ledgerChecks.WithLabelValues(r)
	}
	for _, o := range DeliveryOutcomes() {
		m.deliveries.WithLabelValues(o)
	}
}

// DeliveryOutcomes are every value of webhook_delivery_attempts_total's
// outcome label: the status classes, error, and hookwire's failures.
func DeliveryOutcomes() []string {
	return append(append([]string(nil), deliveryOutcomes...), hookwire.Failures...)
}

// Begin counts a request in flight; the function it returns ends it.
func (m *Metrics) Begin() func() {
	m.inFlight.Inc()
	return m.inFlight.Dec
}

// ObserveRequest records one answered request.
func (m *Metrics) ObserveRequest(route, method string, status int, code string, took time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	method = boundedMethod(method)
	m.requests.WithLabelValues(route, method, statusLabel(status), code).Inc()
	m.duration.WithLabelValues(route, method).Observe(took.Seconds())
}

// ObserveDelivery records one webhook delivery attempt: the receiver's
// status code (0 when none came) or the kind of failure.
func (m *Metrics) ObserveDelivery(status int, failure string, took time.Duration) {
	outcome := failure
	if status > 0 {
		outcome = strconv.Itoa(status/100) + "xx"
	}
	if outcome == "" {
		outcome = "error"
	}
	m.deliveries.WithLabelValues(outcome).Inc()
	m.deliveryDuration.WithLabelValues(outcome).Observe(took.Seconds())
}

// PayoutCompleted records a payout that reached its final state.
func (m *Metrics) PayoutCompleted(state string) { m.payoutsCompleted.WithLabelValues(state).Inc() }

// LedgerChecked records one run of the ledger invariant check.
func (m *Metrics) LedgerChecked(result string) { m.ledgerChecks.WithLabelValues(result).Inc() }

// CounterFunc registers a counter read from fn at each scrape: a count a
// service keeps itself (an atomic), so that the service needs no metrics
// code of its own.
func (m *Metrics) CounterFunc(name, help string, fn func() float64) {
	m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, fn))
}

// GaugeFunc registers a gauge read from fn at each scrape.
func (m *Metrics) GaugeFunc(name, help string, fn func() float64) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn))
}

// methods are the label values of the method label; any other method is
// "OTHER", so a client cannot make new series.
var methods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}

func boundedMethod(m string) string {
	if methods[m] {
		return m
	}
	return "OTHER"
}

func statusLabel(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status)
}

// labelsKey is the context key of a request's Labels.
type labelsKey struct{}

// Labels are what a request's handler learns while it runs and the
// middleware that counts the request reads when it ends (Values): the route
// pattern matched and the error code answered. GraphQL resolves a query's
// fields in goroutines of their own, and each may answer an error, so the
// labels are guarded.
type Labels struct {
	mu    sync.Mutex
	route string
	code  string
}

// Values are the route and the code set so far.
func (l *Labels) Values() (route, code string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.route, l.code
}

// WithLabels returns ctx carrying fresh Labels for the request.
func WithLabels(ctx context.Context) (context.Context, *Labels) {
	l := &Labels{}
	return context.WithValue(ctx, labelsKey{}, l), l
}

// SetRoute names the route pattern of the request in ctx (a no-op outside
// a counted request). The last name set wins: a handler that learns more
// (GraphQL's operation, after its path) names the request again.
func SetRoute(ctx context.Context, route string) {
	if l, ok := ctx.Value(labelsKey{}).(*Labels); ok {
		l.mu.Lock()
		l.route = route
		l.mu.Unlock()
	}
}

// SetCode records the error code the request in ctx answered; the first
// one wins.
func SetCode(ctx context.Context, code string) {
	if l, ok := ctx.Value(labelsKey{}).(*Labels); ok {
		l.mu.Lock()
		if l.code == "" {
			l.code = code
		}
		l.mu.Unlock()
	}
}
