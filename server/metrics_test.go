package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"merchantpay/internal/metrics"
	"merchantpay/internal/testdb"
	"merchantpay/server"
	"merchantpay/server/servertest"
)

// scrape reads the service's /metrics from its admin handler and parses it
// as Prometheus does.
func scrape(t *testing.T, e *servertest.Env) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	e.App.AdminHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// value is the sum of family name's series whose labels include want.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range f.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		ok := true
		for k, v := range want {
			ok = ok && labels[k] == v
		}
		if !ok {
			continue
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum, found
}

// The metrics move with traffic, name requests by route pattern (never a
// path, a reference or a merchant id), and read the money pipeline's
// backlog from the database.
func TestMetricsMoveWithTraffic(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Metered")
		fund(e, m.TestSecret, "NGN", 50000)
		wd := e.REST(http.MethodPost, "/transactions/withdraw", m.TestSecret, withdrawal("metrics-1"), "Idempotency-Key", "k-metrics-1").Expect(200)
		ref, _ := wd.Data()["reference"].(string)
		e.REST(http.MethodPost, "/transactions/withdraw", m.TestSecret, withdrawal("metrics-1"), "Idempotency-Key", "k-metrics-1").Expect(200)
		e.REST(http.MethodPost, "/transactions/withdraw", m.TestSecret, withdrawal("metrics-2"), "Idempotency-Key", "k-metrics-1").Expect(409)
		e.REST(http.MethodPost, "/wallets", m.TestSecret, map[string]any{}).Expect(400)
		e.REST(http.MethodGet, "/transactions/"+ref, m.TestSecret, nil).Expect(200)
		e.Do(http.MethodGet, "/no/such/"+m.ID, m.TestSecret, nil).Expect(404)
		e.GQL(m.TestSecret, `{ me { id } }`, nil).Expect(200)

		fams := scrape(t, e)
		for _, c := range []struct {
			name   string
			labels map[string]string
			least  float64
		}{
			{"http_requests_total", map[string]string{"route": "POST /v1/merchant/public/transactions/withdraw", "status": "200", "code": ""}, 2},
			{"http_requests_total", map[string]string{"route": "POST /v1/merchant/public/transactions/withdraw", "status": "409", "code": "IDEMPOTENCY_KEY_REUSED"}, 1},
			{"http_requests_total", map[string]string{"route": "POST /v1/merchant/public/wallets", "status": "400", "code": "VALIDATION_ERROR"}, 1},
			{"http_requests_total", map[string]string{"route": "GET /v1/merchant/public/transactions/{reference}", "status": "200"}, 1},
			{"http_requests_total", map[string]string{"route": "unmatched", "status": "404", "code": "NOT_FOUND"}, 1},
			{"http_requests_total", map[string]string{"route": "graphql query me", "status": "200"}, 1},
			{"http_request_duration_seconds", map[string]string{"route": "POST /v1/merchant/public/transactions/withdraw"}, 3},
			{"idempotency_replays_total", nil, 1},
			{"idempotency_conflicts_total", map[string]string{"reason": "reused"}, 1},
			// SANDBOX_PAYOUT_DELAY below keeps it pending.
			{"payouts_pending", nil, 1},
			{"payouts_oldest_pending_age_seconds", nil, 0},
			{"go_sql_open_connections", nil, 1},
			{"outbox_events_pending", nil, 0},
			{"webhook_deliveries", map[string]string{"state": "failed"}, 0},
			{"emails_pending", nil, 0},
			{"http_requests_in_flight", nil, 0},
		} {
			got, ok := value(fams, c.name, c.labels)
			if !ok || got < c.least {
				t.Errorf("%s%v = %v (present %v); want at least %v", c.name, c.labels, got, ok, c.least)
			}
		}
		if v, _ := value(fams, "metrics_pipeline_read_errors", nil); v != 0 {
			t.Errorf("metrics_pipeline_read_errors = %v", v)
		}
		// Bounded labels: nothing a client sends or the service makes up per
		// request is a label value.
		for name, f := range fams {
			for _, s := range f.Metric {
				for _, l := range s.Label {
					v := l.GetValue()
					if strings.Contains(v, m.ID) || strings.Contains(v, "WTH-") || strings.Contains(v, "/no/such") || strings.Contains(v, "metrics-") {
						t.Errorf("%s has an unbounded label %s=%q", name, l.GetName(), v)
					}
				}
			}
		}
		// Not on the public listener.
		for _, p := range []string{"/metrics", "/debug/pprof/"} {
			e.Do(http.MethodGet, p, "", nil).Expect(404)
		}
	}, servertest.With("SANDBOX_PAYOUT_DELAY", "1h"))
}

// The ledger check counts its runs, and a ledger that does not add up is
// counted as failed. Before any check, and before any webhook delivery,
// the series the documented alerts read exist at 0: the first failure is
// an increase.
func TestMetricsLedgerCheck(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		zero := map[string][]string{
			"ledger_invariant_checks_total":   {"ok", "failed", "error"},
			"webhook_delivery_attempts_total": metrics.DeliveryOutcomes(),
		}
		label := map[string]string{"ledger_invariant_checks_total": "result", "webhook_delivery_attempts_total": "outcome"}
		fams := scrape(t, e)
		for name, values := range zero {
			for _, v := range values {
				if got, ok := value(fams, name, map[string]string{label[name]: v}); !ok || got != 0 {
					t.Errorf("at start %s{%s=%q} = %v (served %v), want 0", name, label[name], v, got, ok)
				}
			}
		}
		m := e.Merchant("Checked")
		fund(e, m.TestSecret, "NGN", 1000)
		if got := server.RunLedgerCheck(e.App, context.Background()); got != "ok" {
			t.Fatalf("ledger check on a sound ledger: %s", got)
		}
		// Money made out of nothing: a balance raised without a posting.
		if _, err := e.App.DB.SQL().Exec(`UPDATE ledger_accounts SET available = available + 1 WHERE available > 0`); err != nil {
			t.Fatal(err)
		}
		if got := server.RunLedgerCheck(e.App, context.Background()); got != "failed" {
			t.Fatalf("ledger check on a broken ledger: %s", got)
		}
		fams = scrape(t, e)
		for result, want := range map[string]float64{"ok": 1, "failed": 1} {
			if got, _ := value(fams, "ledger_invariant_checks_total", map[string]string{"result": result}); got != want {
				t.Errorf("ledger_invariant_checks_total{result=%q} = %v, want %v", result, got, want)
			}
		}
	}, servertest.WithoutWorkers())
}

// Every metric the operators' dashboard and alerts (docs/) query is one
// the service serves: a renamed metric would leave a panel blank.
func TestDashboardQueriesServedMetrics(t *testing.T) {
	e := servertest.New(t, testdb.MigratedSQLiteURL(t))
	m := e.Merchant("Dashboard")
	e.REST(http.MethodGet, "/balances", m.TestSecret, nil).Expect(200)
	e.App.Metrics.ObserveDelivery(200, "", time.Millisecond)
	e.App.Metrics.PayoutCompleted("success")
	e.App.Metrics.LedgerChecked("ok")
	served := map[string]bool{}
	for name, f := range scrape(t, e) {
		served[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			served[name+"_bucket"] = true
		}
	}
	promql := map[string]bool{"sum": true, "by": true, "rate": true, "max": true, "histogram_quantile": true, "increase": true,
		"le": true, "route": true, "code": true, "status": true, "state": true, "outcome": true, "reason": true,
		"db_name": true, "result": true, "for": true, "expr": true, "alert": true}
	word := regexp.MustCompile(`[a-z_][a-z0-9_]*`)
	checked := 0
	for _, doc := range []string{"../docs/grafana-dashboard.json", "../docs/OPERATIONS.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		var exprs []string
		if strings.HasSuffix(doc, ".json") {
			var d struct {
				Panels []struct {
					Targets []struct{ Expr string } `json:"targets"`
				} `json:"panels"`
			}
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatalf("%s: %v", doc, err)
			}
			for _, p := range d.Panels {
				for _, tg := range p.Targets {
					exprs = append(exprs, tg.Expr)
				}
			}
		} else {
			for _, line := range strings.Split(string(b), "\n") {
				if l := strings.TrimSpace(line); strings.HasPrefix(l, "expr:") || strings.HasPrefix(l, "sum(") || strings.HasPrefix(l, "/ sum(") ||
					strings.HasPrefix(l, "histogram_quantile(") || strings.HasPrefix(l, "http_request_duration") {
					exprs = append(exprs, strings.TrimPrefix(l, "expr:"))
				}
			}
		}
		for _, ex := range exprs {
			// Label values are quoted; what is left are names.
			ex = regexp.MustCompile(`"[^"]*"`).ReplaceAllString(ex, "")
			for _, w := range word.FindAllString(ex, -1) {
				if promql[w] || !strings.Contains(w, "_") && !served[w] {
					continue
				}
				checked++
				if !served[w] {
					t.Errorf("%s queries %s, which /metrics does not serve", doc, w)
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d metric names found in the dashboard and alerts", checked)
	}
}
