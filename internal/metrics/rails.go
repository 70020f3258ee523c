package metrics

import "github.com/prometheus/client_golang/prometheus"

// Rails are the counters of live mode's providers: their webhooks, the
// look-ups that reconcile what a webhook did not tell, and the amounts that
// disagree with ours. Labels are bounded: provider names and fixed outcomes.
type Rails struct {
	webhooks   *prometheus.CounterVec
	reconciled *prometheus.CounterVec
	flagged    *prometheus.CounterVec
}

// Rails registers and returns the providers' counters (once per Metrics).
func (m *Metrics) Rails() *Rails {
	m.railsOnce.Do(func() {
		m.rails = &Rails{
			webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "rails_webhooks_total",
				Help: "Provider webhook deliveries, by provider and outcome: processed, duplicate (acknowledged, changed nothing), bad_signature (answered 401), unreadable (verified but not parsed), error (answered 500 for the provider to retry).",
			}, []string{"provider", "outcome"}),
			reconciled: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "rails_reconciler_lookups_total",
				Help: "Look-ups of live payouts and crypto orders at their provider by the reconciling workers, by provider, kind (payout, order) and outcome (pending, success, failed, paid, closed, error).",
			}, []string{"provider", "kind", "outcome"}),
			flagged: prometheus.NewCounterVec(prometheus.CounterOpts{
				Name: "rails_amount_mismatches_total",
				Help: "Transactions a provider reported with an amount that differs from ours: left unsettled and flagged (transactions.rails_flag) for an operator. Any increase needs a person.",
			}, []string{"provider"}),
		}
		m.Registry.MustRegister(m.rails.webhooks, m.rails.reconciled, m.rails.flagged)
		// Every provider's series exist from the start at zero, so that an
		// alert on their increase sees the first one.
		for _, p := range []string{"paystack", "flutterwave", "binancepay"} {
			m.rails.flagged.WithLabelValues(p)
			for _, o := range []string{"processed", "duplicate", "bad_signature"} {
				m.rails.webhooks.WithLabelValues(p, o)
			}
		}
		for _, pk := range [][2]string{{"paystack", "payout"}, {"flutterwave", "payout"}, {"binancepay", "order"}} {
			m.rails.reconciled.WithLabelValues(pk[0], pk[1], "error")
		}
	})
	return m.rails
}

// Webhook counts one provider webhook delivery.
func (r *Rails) Webhook(provider, outcome string) {
	if r != nil {
		r.webhooks.WithLabelValues(provider, outcome).Inc()
	}
}

// Reconciled counts one look-up of a reconciling worker.
func (r *Rails) Reconciled(provider, kind, outcome string) {
	if r != nil {
		r.reconciled.WithLabelValues(provider, kind, outcome).Inc()
	}
}

// Flagged counts one amount that disagrees with ours.
func (r *Rails) Flagged(provider string) {
	if r != nil {
		r.flagged.WithLabelValues(provider).Inc()
	}
}
