package webhooks

import (
	"bytes"
	"context"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/webhookattempt"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// bulkFixture is a database with one endpoint and n events fanned out into
// due deliveries by the dispatcher's own fan-out (insertDeliveries).
func bulkFixture(t *testing.T, url string, n int) (*store.DB, *clock.Fake, *Dispatcher, []*ent.Event) {
	t.Helper()
	db := testdb.Open(t, url)
	clk := clock.NewFake(time.Now().Truncate(time.Millisecond))
	tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
	ctx := tenant.With(context.Background(), tn)
	u := "http://127.0.0.1:1/hook"
	if _, err := New(db, clk, true, nil).Create(ctx, nil, CreateInput{URL: &u}); err != nil {
		t.Fatal(err)
	}
	ob := events.New(db, clk)
	evs := make([]*ent.Event, n)
	for i := range evs {
		evs[i], _ = eventtest.Emit(t, db, ob, tn, "deposit.success")
	}
	d := NewDispatcher(db, clk, DispatcherConfig{})
	if err := d.fanOut(tenant.System(context.Background()), func() {}); err != nil {
		t.Fatal(err)
	}
	return db, clk, d, evs
}

// The hand-written inserts write what ent would: every column, defaults
// included, NULL where nothing was seen; a second fan-out of the same
// pair keeps the first delivery.
func TestInsertDeliveriesAndAttempts(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db, clk, _, evs := bulkFixture(t, url, 1)
		sys := tenant.System(context.Background())
		c := db.Reader()
		dl, err := c.WebhookDelivery.Query().Only(sys)
		if err != nil {
			t.Fatal(err)
		}
		ev := evs[0]
		now := clk.Now()
		if !dl.CreatedAt.Equal(now) || !dl.UpdatedAt.Equal(now) || dl.NextAttemptAt == nil || !dl.NextAttemptAt.Equal(now) ||
			dl.MerchantID != ev.MerchantID || dl.Mode != ev.Mode || dl.EventSeq != ev.ID || dl.EventID != ev.EventID ||
			dl.EventType != ev.Type || dl.URL != "http://127.0.0.1:1/hook" || dl.Status != StatusPending ||
			dl.Attempts != 0 || dl.RunAttempts != 0 || dl.Generation != 0 ||
			dl.LeaseOwner != nil || dl.LeaseUntil != nil || dl.LastStatusCode != nil || dl.LastError != nil || dl.CompletedAt != nil {
			t.Fatalf("delivery as written: %+v", dl)
		}
		ep, err := c.WebhookEndpoint.Query().Only(sys)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Within(sys, nil, func(ctx context.Context, tx *ent.Tx) error {
			return insertDeliveries(ctx, db, tx.Client(), []newDeliveryPair{{ev, ep}}, now.Add(time.Hour))
		})
		if err != nil {
			t.Fatal(err)
		}
		if again, err := c.WebhookDelivery.Query().Only(sys); err != nil || again.ID != dl.ID || !again.NextAttemptAt.Equal(now) {
			t.Fatalf("a second insert of the pair: %+v, %v", again, err)
		}

		started := now.Add(-time.Second)
		batch := []recordReq{
			{dl: dl, out: outcome{started: started, latency: 1500 * time.Millisecond, status: 200, body: "ok"}},
			{dl: dl, out: outcome{started: started, err: "no answer within 10s"}},
		}
		err = db.Within(sys, nil, func(ctx context.Context, tx *ent.Tx) error { return insertAttempts(ctx, db, tx.Client(), batch) })
		if err != nil {
			t.Fatal(err)
		}
		atts, err := c.WebhookAttempt.Query().Where(webhookattempt.DeliveryID(dl.ID)).Order(ent.Asc(webhookattempt.FieldID)).All(sys)
		if err != nil || len(atts) != 2 {
			t.Fatalf("attempts: %v, %v", atts, err)
		}
		ok, failed := atts[0], atts[1]
		if ok.MerchantID != dl.MerchantID || ok.Mode != dl.Mode || ok.Number != 1 || !ok.StartedAt.Equal(started) ||
			ok.LatencyMs != 1500 || ok.StatusCode == nil || *ok.StatusCode != 200 || ok.Error != nil ||
			ok.ResponseBody != "ok" || !ok.Success {
			t.Fatalf("successful attempt as written: %+v", ok)
		}
		if failed.StatusCode != nil || failed.Error == nil || *failed.Error != "no answer within 10s" ||
			failed.ResponseBody != "" || failed.Success || failed.ID <= ok.ID {
			t.Fatalf("failed attempt as written: %+v", failed)
		}
	})
}

// PostgreSQL claims in one statement: only due, unleased, pending
// deliveries, at most n, each to one owner, returned as leased and as ent
// reads them; an expired lease is claimed again.
func TestClaimPostgres(t *testing.T) {
	url := testdb.MigratedPostgresURL(t)
	db, clk, d, _ := bulkFixture(t, url, 5)
	sys := tenant.System(context.Background())
	c := db.Reader()
	now := clk.Now()
	all, err := c.WebhookDelivery.Query().Order(ent.Asc(webhookdelivery.FieldID)).All(sys)
	if err != nil || len(all) != 5 {
		t.Fatalf("deliveries: %d, %v", len(all), err)
	}
	// One not yet due, one already done: neither is claimed.
	if err := c.WebhookDelivery.UpdateOneID(all[3].ID).SetNextAttemptAt(now.Add(time.Minute)).Exec(sys); err != nil {
		t.Fatal(err)
	}
	if err := c.WebhookDelivery.UpdateOneID(all[4].ID).SetStatus(StatusSucceeded).Exec(sys); err != nil {
		t.Fatal(err)
	}

	until := now.Add(d.cfg.Lease)
	first, err := claimPostgres(sys, db, "a", now, until, 2)
	if err != nil || len(first) != 2 {
		t.Fatalf("first claim: %d, %v", len(first), err)
	}
	second, err := claimPostgres(sys, db, "b", now, until, 10)
	if err != nil || len(second) != 1 {
		t.Fatalf("second claim: %d, %v", len(second), err)
	}
	if none, err := claimPostgres(sys, db, "c", now, until, 10); err != nil || len(none) != 0 {
		t.Fatalf("third claim: %d, %v", len(none), err)
	}
	ep, err := c.WebhookEndpoint.Query().Only(sys)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for owner, claimed := range map[string][]claimedDelivery{"a": first, "b": second} {
		for _, a := range claimed {
			dl := a.dl
			// The endpoint and event come with the claim, as the attempt
			// uses them.
			if a.ep == nil || a.ep.ID != ep.ID || a.ep.ID != dl.EndpointID || a.ep.MerchantID != ep.MerchantID ||
				a.ep.Mode != ep.Mode || a.ep.URL != ep.URL || a.ep.Secret != ep.Secret || a.ep.Secret == "" ||
				!a.ep.Enabled || a.ep.DeletedAt != nil {
				t.Fatalf("%s came with endpoint %+v, stored %+v", dl.ID, a.ep, ep)
			}
			ev, err := c.Event.Query().Where(event.EventID(dl.EventID)).Only(sys)
			if err != nil {
				t.Fatal(err)
			}
			if a.ev == nil || a.ev.ID != ev.ID || a.ev.ID != dl.EventSeq || a.ev.EventID != ev.EventID ||
				a.ev.MerchantID != ev.MerchantID || a.ev.Mode != ev.Mode || a.ev.Type != ev.Type ||
				!a.ev.CreatedAt.Equal(ev.CreatedAt) || !bytes.Equal(a.ev.Payload, ev.Payload) || len(ev.Payload) == 0 {
				t.Fatalf("%s came with event %+v, stored %+v", dl.ID, a.ev, ev)
			}
			if string(Body(a.ev)) != string(Body(ev)) {
				t.Fatalf("%s: body %s, want %s", dl.ID, Body(a.ev), Body(ev))
			}
			if prev, ok := seen[dl.ID]; ok {
				t.Fatalf("%s claimed by %s and %s", dl.ID, prev, owner)
			}
			seen[dl.ID] = owner
			read, err := c.WebhookDelivery.Get(sys, dl.ID)
			if err != nil {
				t.Fatal(err)
			}
			if dl.LeaseOwner == nil || *dl.LeaseOwner != owner || dl.LeaseUntil == nil || !dl.LeaseUntil.Equal(until) {
				t.Fatalf("%s returned with lease %v until %v", dl.ID, dl.LeaseOwner, dl.LeaseUntil)
			}
			if *read.LeaseOwner != *dl.LeaseOwner || !read.LeaseUntil.Equal(*dl.LeaseUntil) ||
				read.MerchantID != dl.MerchantID || read.Mode != dl.Mode || read.EventSeq != dl.EventSeq ||
				read.EventID != dl.EventID || read.EventType != dl.EventType || read.EndpointID != dl.EndpointID ||
				read.URL != dl.URL || read.Status != dl.Status || read.Attempts != dl.Attempts ||
				read.RunAttempts != dl.RunAttempts || read.Generation != dl.Generation ||
				!read.NextAttemptAt.Equal(*dl.NextAttemptAt) || !read.CreatedAt.Equal(dl.CreatedAt) ||
				!read.UpdatedAt.Equal(dl.UpdatedAt) || dl.LastStatusCode != nil || dl.LastError != nil || dl.CompletedAt != nil {
				t.Fatalf("returned %+v, stored %+v", dl, read)
			}
		}
	}
	if _, ok := seen[all[3].ID]; ok {
		t.Fatal("a delivery not yet due was claimed")
	}
	if _, ok := seen[all[4].ID]; ok {
		t.Fatal("a succeeded delivery was claimed")
	}

	// Once the leases run out, the deliveries are claimed again; a deleted
	// endpoint comes as deleted (the attempt abandons the delivery).
	deleted := now.Add(time.Hour)
	if err := c.WebhookEndpoint.UpdateOneID(ep.ID).SetDeletedAt(deleted).SetEnabled(false).Exec(sys); err != nil {
		t.Fatal(err)
	}
	later := until.Add(time.Second)
	again, err := claimPostgres(sys, db, "c", later, later.Add(d.cfg.Lease), 10)
	if err != nil || len(again) != 4 {
		t.Fatalf("claim after the leases ran out: %d, %v", len(again), err)
	}
	for _, a := range again {
		if a.ep == nil || a.ep.DeletedAt == nil || !a.ep.DeletedAt.Equal(deleted) || a.ep.Enabled || a.ev == nil {
			t.Fatalf("%s came with endpoint %+v", a.dl.ID, a.ep)
		}
	}
}
