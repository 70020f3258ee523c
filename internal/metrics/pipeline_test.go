package metrics_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"merchantpay/ent"
	"merchantpay/ent/eventfanout"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/metrics"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// The outbox's figures: none waiting reads 0 and 0; then how many events
// wait for fan-out and the age of the one queued first, which is the next
// one once fan-out took the first's queue row.
func TestPipelineOutbox(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		written := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
		now := written
		p := metrics.NewPipeline(db, func() time.Time { return now })
		want := func(pending, age float64) {
			t.Helper()
			got := gauges(t, p)
			if got["outbox_events_pending"] != pending || got["outbox_oldest_pending_age_seconds"] != age {
				t.Fatalf("outbox pending %v, oldest %vs; want %v, %vs (all: %v)", got["outbox_events_pending"],
					got["outbox_oldest_pending_age_seconds"], pending, age, got)
			}
		}
		want(0, 0)

		fake := clock.NewFake(written)
		ob := events.New(db, fake)
		tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
		eventtest.Emit(t, db, ob, tn, events.DepositSuccess)
		fake.Advance(30 * time.Second)
		eventtest.Emit(t, db, ob, tn, events.DepositSuccess)
		now = written.Add(90 * time.Second)
		want(2, 90)

		// Fan-out takes the first event's queue row (as webhooks' fan-out
		// does on SQLite): the second, 30s younger, is the oldest now.
		sys := tenant.System(context.Background())
		err := db.Within(sys, nil, func(ctx context.Context, tx *ent.Tx) error {
			first, err := tx.EventFanout.Query().Order(ent.Asc(eventfanout.FieldID)).FirstID(ctx)
			if err != nil {
				return err
			}
			return tx.EventFanout.DeleteOneID(first).Exec(ctx)
		})
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
		want(1, 120)
	})
}

// gauges collects p's figures by name (their labels left out).
func gauges(t *testing.T, p prometheus.Collector) map[string]float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	p.Collect(ch)
	close(ch)
	out := map[string]float64{}
	for m := range ch {
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		desc := m.Desc().String()
		name := desc[strings.Index(desc, `fqName: "`)+len(`fqName: "`):]
		out[name[:strings.Index(name, `"`)]] = d.GetGauge().GetValue()
	}
	return out
}
