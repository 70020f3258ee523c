package server

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"merchantpay/ent"
	"merchantpay/internal/ledger"
	"merchantpay/internal/metrics"
	"merchantpay/internal/ratelimit"
	"merchantpay/internal/tenant"
)

// setupMetrics registers what the services count and the database's
// backlog on a.Metrics. The services keep their own counts (atomics read at
// scrape time), so none of them depends on the metrics library.
func (a *App) setupMetrics(limiter *ratelimit.Limiter) {
	m := a.Metrics
	m.Registry.MustRegister(metrics.NewPipeline(a.DB, a.Clock.Now))
	for name, pool := range a.DB.Pools() {
		m.Registry.MustRegister(collectors.NewDBStatsCollector(pool, name))
	}
	m.GaugeFunc("graphql_subscribers", "GraphQL subscriptions open on this instance.",
		func() float64 { return float64(a.Broker.Subscribers()) })
	m.CounterFunc("subscription_events_streamed_total", "Events handed to GraphQL subscribers on this instance.",
		func() float64 { return float64(a.Broker.Streamed()) })
	m.CounterFunc("idempotency_replays_total", "Keyed requests answered with their stored first answer.",
		func() float64 { return float64(a.Idem.Counts().Replays) })
	for reason, count := range map[string]func() uint64{
		"reused": func() uint64 { return a.Idem.Counts().Reused },
		"in_use": func() uint64 { return a.Idem.Counts().InUse },
	} {
		m.Registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "idempotency_conflicts_total",
			Help:        "Keyed requests refused: reused (the key came with another request), in_use (the key's first request still runs).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 { return float64(count()) }))
	}
	m.CounterFunc("rate_limit_refusals_total", "Requests and WebSocket operations refused by the per-key rate limit.",
		func() float64 {
			if limiter == nil {
				return 0
			}
			return float64(limiter.Refused())
		})
}

// checkLedger runs the ledger's invariant check every interval, in one
// snapshot of the database, and counts the result: a failure means money
// does not add up, which no request would notice on its own.
func (a *App) checkLedger(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a.Metrics.LedgerChecked(a.runLedgerCheck(ctx))
	}
}

// runLedgerCheck runs the check once: metrics.LedgerOK, LedgerFailed or
// LedgerError.
func (a *App) runLedgerCheck(ctx context.Context) string {
	sys := tenant.System(ctx)
	err := a.DB.Snapshot(sys, func(ctx context.Context, tx *ent.Tx) error { return ledger.CheckIn(ctx, tx.Client()) })
	switch {
	case err == nil:
		return metrics.LedgerOK
	case errors.Is(err, ledger.ErrInvariant):
		a.Log.Error("LEDGER INVARIANT VIOLATED: money does not add up", "err", err)
		return metrics.LedgerFailed
	default:
		if ctx.Err() == nil {
			a.Log.Warn("ledger check could not run", "err", err)
		}
		return metrics.LedgerError
	}
}
