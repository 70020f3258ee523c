package webhooks

import (
	"context"
	"net/http"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/webhookattempt"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// Recording a batch moves each delivery on as its outcome says, and only a
// delivery still held in its generation: a success ends it, an error
// schedules the next retry, an error with the schedule spent fails it; a
// delivery redelivered meanwhile, or whose lease another instance took,
// only counts the attempt (and the redelivered one loses this lease).
// Every attempt is stored as seen, text with quotes and backslashes
// included. On PostgreSQL both ways of recording are checked: the one
// statement and the transaction (SQLite's way, and the fallback).
func TestRecordBatch(t *testing.T) {
	// As the recorder does: the batch's transaction, and should it fail
	// (a delivery moved on), each outcome on its own.
	inTx := func(d *Dispatcher) recordWay {
		return func(ctx context.Context, batch []recordReq, _ time.Time) error {
			if err := d.recordInTx(ctx, batch); err != nil {
				for _, r := range batch {
					if err := d.record(ctx, r.dl, r.ep, r.out); err != nil {
						return err
					}
				}
			}
			return nil
		}
	}
	testdb.EachMigrated(t, func(t *testing.T, url string) { checkRecordBatch(t, url, inTx) })
	t.Run("postgres one statement", func(t *testing.T) {
		checkRecordBatch(t, testdb.MigratedPostgresURL(t), func(d *Dispatcher) recordWay { return d.recordPostgres })
	})
}

type recordWay = func(context.Context, []recordReq, time.Time) error

func checkRecordBatch(t *testing.T, url string, way func(*Dispatcher) recordWay) {
	db, clk, d, _ := bulkFixture(t, url, 5)
	sys := tenant.System(context.Background())
	c := db.Reader()
	all, err := c.WebhookDelivery.Query().Order(ent.Asc(webhookdelivery.FieldID)).All(sys)
	if err != nil || len(all) != 5 {
		t.Fatalf("deliveries: %d, %v", len(all), err)
	}
	spent := len(d.cfg.Schedule)
	if err := c.WebhookDelivery.UpdateOneID(all[2].ID).SetRunAttempts(spent).Exec(sys); err != nil {
		t.Fatal(err)
	}
	claimed, err := d.claim(sys, 10)
	if err != nil || len(claimed) != 5 {
		t.Fatalf("claim: %d, %v", len(claimed), err)
	}
	byID := map[string]*ent.WebhookDelivery{}
	for _, a := range claimed {
		byID[a.dl.ID] = a.dl
	}
	dl := func(i int) *ent.WebhookDelivery { return byID[all[i].ID] }

	// Meanwhile: all[3] is redelivered, all[4]'s lease is another's.
	marker := clk.Now().Add(-time.Hour)
	if err := c.WebhookDelivery.UpdateOneID(all[3].ID).AddGeneration(1).SetUpdatedAt(marker).Exec(sys); err != nil {
		t.Fatal(err)
	}
	otherUntil := clk.Now().Add(time.Hour)
	if err := c.WebhookDelivery.UpdateOneID(all[4].ID).SetLeaseOwner("other").SetLeaseUntil(otherUntil).Exec(sys); err != nil {
		t.Fatal(err)
	}

	clk.Advance(3 * time.Second)
	now := clk.Now()
	started := now.Add(-2 * time.Second)
	tricky := `ok "quoted" \ back 'single' {braces,} NULL é`
	batch := []recordReq{
		{dl: dl(0), out: outcome{started: started, latency: 15 * time.Millisecond, status: 200, body: tricky}},
		{dl: dl(1), out: outcome{started: started, latency: 20 * time.Millisecond, status: 500, err: "HTTP 500", body: "oops"}},
		{dl: dl(2), out: outcome{started: started, latency: 10 * time.Second, err: `no answer within 10s: "x" \n`}},
		{dl: dl(3), out: outcome{started: started, latency: time.Millisecond, status: 204}},
		{dl: dl(4), out: outcome{started: started, latency: time.Millisecond, status: 200, body: "NULL"}},
	}
	if !oneStatement(batch) {
		t.Fatal("a batch without 410 or duplicates takes the one statement on PostgreSQL")
	}
	if err := way(d)(sys, batch, now); err != nil {
		t.Fatal(err)
	}

	get := func(i int) *ent.WebhookDelivery {
		t.Helper()
		got, err := c.WebhookDelivery.Get(sys, all[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	eqTime := func(a *time.Time, b time.Time) bool { return a != nil && a.Equal(b) }
	eqInt := func(a *int, b int) bool { return a != nil && *a == b }
	eqStr := func(a *string, b string) bool { return a != nil && *a == b }

	if g := get(0); g.Status != StatusSucceeded || g.Attempts != 1 || g.RunAttempts != 0 || g.NextAttemptAt != nil ||
		!eqTime(g.CompletedAt, now) || !eqInt(g.LastStatusCode, 200) || g.LastError != nil ||
		g.LeaseOwner != nil || g.LeaseUntil != nil || !g.UpdatedAt.Equal(now) {
		t.Errorf("succeeded: %+v", g)
	}
	first, _ := hookwire.NextAttempt(d.cfg.Schedule, 1, nil)
	if g := get(1); g.Status != StatusPending || g.Attempts != 1 || g.RunAttempts != 1 ||
		!eqTime(g.NextAttemptAt, now.Add(first)) || g.CompletedAt != nil || !eqInt(g.LastStatusCode, 500) ||
		!eqStr(g.LastError, "HTTP 500") || g.LeaseOwner != nil || g.LeaseUntil != nil || !g.UpdatedAt.Equal(now) {
		t.Errorf("retry: %+v", g)
	}
	if g := get(2); g.Status != StatusFailed || g.Attempts != 1 || g.RunAttempts != spent+1 || g.NextAttemptAt != nil ||
		!eqTime(g.CompletedAt, now) || g.LastStatusCode != nil || !eqStr(g.LastError, batch[2].out.err) ||
		g.LeaseOwner != nil || g.LeaseUntil != nil || !g.UpdatedAt.Equal(now) {
		t.Errorf("schedule spent: %+v", g)
	}
	if g := get(3); g.Status != StatusPending || g.Attempts != 1 || g.Generation != 1 || g.RunAttempts != 0 ||
		!eqTime(g.NextAttemptAt, all[3].NextAttemptAt.UTC()) || g.CompletedAt != nil || g.LastStatusCode != nil ||
		g.LastError != nil || g.LeaseOwner != nil || g.LeaseUntil != nil || !g.UpdatedAt.Equal(marker) {
		t.Errorf("redelivered meanwhile: %+v", g)
	}
	if g := get(4); g.Status != StatusPending || g.Attempts != 1 || g.CompletedAt != nil || g.LastStatusCode != nil ||
		!eqStr(g.LeaseOwner, "other") || !eqTime(g.LeaseUntil, otherUntil) || !g.UpdatedAt.Equal(all[4].UpdatedAt) {
		t.Errorf("leased by another instance: %+v", g)
	}

	for i, r := range batch {
		atts, err := c.WebhookAttempt.Query().Where(webhookattempt.DeliveryID(all[i].ID)).All(sys)
		if err != nil || len(atts) != 1 {
			t.Fatalf("attempts of %d: %v, %v", i, atts, err)
		}
		a := atts[0]
		wantStatus, wantErr := (*int)(nil), (*string)(nil)
		if r.out.status != 0 {
			wantStatus = &r.out.status
		}
		if r.out.err != "" {
			wantErr = &r.out.err
		}
		if a.MerchantID != all[i].MerchantID || a.Mode != all[i].Mode || a.Number != 1 || !a.StartedAt.Equal(started) ||
			a.LatencyMs != r.out.latency.Milliseconds() || (a.StatusCode == nil) != (wantStatus == nil) ||
			(wantStatus != nil && *a.StatusCode != *wantStatus) || (a.Error == nil) != (wantErr == nil) ||
			(wantErr != nil && *a.Error != *wantErr) || a.ResponseBody != r.out.body || a.Success != r.out.succeeded() {
			t.Errorf("attempt %d stored as %+v, seen %+v", i, a, r.out)
		}
	}
}

// A 410 (which disables the endpoint) or a delivery twice in a batch
// keeps the batch off the one statement.
func TestOneStatement(t *testing.T) {
	a, b := &ent.WebhookDelivery{ID: "a"}, &ent.WebhookDelivery{ID: "b"}
	ok := outcome{status: 200}
	if !oneStatement([]recordReq{{dl: a, out: ok}, {dl: b, out: ok}}) {
		t.Error("two deliveries, no 410")
	}
	if oneStatement([]recordReq{{dl: a, out: ok}, {dl: b, out: outcome{status: http.StatusGone}}}) {
		t.Error("a 410")
	}
	if oneStatement([]recordReq{{dl: a, out: ok}, {dl: a, out: ok}}) {
		t.Error("one delivery twice")
	}
}
