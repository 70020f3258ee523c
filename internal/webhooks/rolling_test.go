package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/eventfanout"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// During a rolling upgrade, instances of the release before the fan-out
// queue run on the migrated database: they write events with fanned_out
// false and no queue row, and their own dispatcher may fan those events out
// too. Each such event is still sent exactly once by this release's
// dispatcher: "evt_left" was fanned out by no instance of the release
// before, "evt_both" by one (its deliveries and the flag, as that release's
// fan-out wrote them) before this release's took it; "evt_new" is this
// release's own event, written beside them.
func TestRollingUpgradeSendsPreviousReleaseEventsOnce(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		clk := clock.NewFake(time.Now())
		tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
		ctx := tenant.With(context.Background(), tn)
		sys := tenant.System(context.Background())

		var mu sync.Mutex
		hits := map[string]int{}
		rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits[r.Header.Get(hookwire.HeaderID)]++
			mu.Unlock()
		}))
		defer rcv.Close()
		u := rcv.URL
		ep, err := New(db, clk, true, nil).Create(ctx, nil, CreateInput{URL: &u})
		if err != nil {
			t.Fatal(err)
		}

		// As the release before wrote its events: fanned_out false, no
		// queue row.
		now := clk.Now().UTC().Truncate(time.Millisecond)
		for _, id := range []string{"evt_left", "evt_both"} {
			query, args := entsql.Dialect(db.Dialect).Insert(event.Table).
				Columns(event.FieldMerchantID, event.FieldMode, event.FieldEventID, event.FieldType,
					event.FieldPayload, event.FieldCreatedAt, event.FieldFannedOut).
				Values(tn.MerchantID, tn.Mode, id, "deposit.success", []byte(`{}`), now, false).
				Query()
			if _, err := db.SQL().ExecContext(context.Background(), query, args...); err != nil {
				t.Fatal(err)
			}
		}
		newEv, _ := eventtest.Emit(t, db, events.New(db, clk), tn, "deposit.success")
		if n, err := db.Reader().EventFanout.Query().Count(sys); err != nil || n != 3 {
			t.Fatalf("%d events queued (%v), want 3: the release before's two and this release's one", n, err)
		}

		// The release before's dispatcher fans "evt_both" out: its
		// deliveries (the same insert, ON CONFLICT DO NOTHING) and its flag.
		both, err := db.Reader().Event.Query().Where(event.EventID("evt_both")).Only(sys)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Within(sys, nil, func(ctx context.Context, tx *ent.Tx) error {
			pairs := []newDeliveryPair{{ev: both, ep: ep}}
			if err := insertDeliveries(ctx, db, tx.Client(), pairs, now); err != nil {
				return err
			}
			query, args := entsql.Dialect(db.Dialect).Update(event.Table).
				Set(event.FieldFannedOut, true).Where(entsql.EQ(event.FieldID, both.ID)).Query()
			_, err := tx.ExecContext(ctx, query, args...)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}

		runCtx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			NewDispatcher(db, clk, DispatcherConfig{PollInterval: 5 * time.Millisecond, AllowPrivate: true}).Run(runCtx)
		}()
		ids := []string{"evt_left", "evt_both", newEv.EventID}
		for deadline := time.Now().Add(20 * time.Second); ; {
			mu.Lock()
			sent := 0
			for _, id := range ids {
				if hits[id] > 0 {
					sent++
				}
			}
			mu.Unlock()
			if sent == len(ids) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d events sent", sent, len(ids))
			}
			time.Sleep(10 * time.Millisecond)
		}
		// Time for a second fan-out or send, were there one to make.
		time.Sleep(100 * time.Millisecond)
		cancel()
		<-stopped

		mu.Lock()
		defer mu.Unlock()
		for _, id := range ids {
			if hits[id] != 1 {
				t.Errorf("%s sent %d times, want 1", id, hits[id])
			}
			n, err := db.Reader().WebhookDelivery.Query().Where(webhookdelivery.EventID(id)).Count(sys)
			if err != nil || n != 1 {
				t.Errorf("%s: %d deliveries (%v), want 1", id, n, err)
			}
		}
		if n, err := db.Reader().EventFanout.Query().Where(eventfanout.IDGT(0)).Count(sys); err != nil || n != 0 {
			t.Errorf("%d events still queued (%v)", n, err)
		}
	})
}
