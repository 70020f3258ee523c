package mail_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/emailnotification"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/mail"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// The dispatcher's fan-out hands Enqueue events without their payloads:
// the e-mail is then written from the payload and merchant read together,
// the same e-mail as from the whole event; an event whose merchant does
// not exist queues nothing and holds nothing up.
func TestEnqueueWithoutPayload(t *testing.T) {
	testdb.Each(t, func(t *testing.T, url string) {
		db, sys, ob, m := newMailEnv(t, url, [3]string{"m_1", "Ada's Shop", "ada@example.com"})
		c := db.Client(sys)
		whole, _ := eventtest.Emit(t, db, ob, tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}, "deposit.success")
		orphan, _ := eventtest.Emit(t, db, ob, tenant.Tenant{MerchantID: "m_gone", Mode: tenant.Test}, "deposit.success")
		if len(whole.Payload) == 0 {
			t.Fatal("the event has no payload to test with")
		}
		for _, ev := range []*ent.Event{whole, orphan} {
			bare := *ev
			bare.Payload = nil
			if err := db.Tx(sys, func(ctx context.Context) error { return m.Enqueue(ctx, &bare) }); err != nil {
				t.Fatal(err)
			}
		}
		got, err := c.EmailNotification.Query().All(sys)
		if err != nil || len(got) != 1 {
			t.Fatalf("e-mails queued: %v, %v", got, err)
		}
		e := got[0]
		subject, body := mail.Compose(whole, "Ada's Shop")
		if e.EventID != whole.EventID || e.ToAddress != "ada@example.com" || e.Subject != subject || e.Body != body ||
			e.MerchantID != "m_1" || e.Mode != tenant.Test || e.Status != mail.StatusPending {
			t.Fatalf("e-mail %+v; want subject %q, body %q", e, subject, body)
		}
		if len(subject) == 0 || !containsAll(body, "1500.5", "NGN", "Invoice <42> & co") {
			t.Fatalf("the e-mail does not show the payload: %q", body)
		}
		// The whole event writes the same e-mail (a second call keeps the first).
		if _, err := c.EmailNotification.Delete().Where(emailnotification.ID(e.ID)).Exec(sys); err != nil {
			t.Fatal(err)
		}
		if err := db.Tx(sys, func(ctx context.Context) error { return m.Enqueue(ctx, whole) }); err != nil {
			t.Fatal(err)
		}
		again, err := c.EmailNotification.Query().Only(sys)
		if err != nil || again.Subject != subject || again.Body != body {
			t.Fatalf("from the whole event: %+v, %v", again, err)
		}
	})
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// newMailEnv opens a database with the merchants given as (id, name,
// e-mail), an outbox and a mailer without SMTP, on a fake clock.
func newMailEnv(t *testing.T, url string, merchants ...[3]string) (*store.DB, context.Context, *events.Outbox, *mail.Mailer) {
	t.Helper()
	db := testdb.Open(t, url)
	clk := clock.NewFake(time.Now().Truncate(time.Millisecond))
	sys := tenant.System(context.Background())
	now := clk.Now()
	for _, mer := range merchants {
		if err := db.Client(sys).Merchant.Create().SetID(mer[0]).SetName(mer[1]).SetEmail(mer[2]).
			SetCreatedAt(now).SetUpdatedAt(now).Exec(sys); err != nil {
			t.Fatal(err)
		}
	}
	return db, sys, events.New(db, clk), mail.New(db, clk, mail.Config{})
}

// A fan-out batch is queued in one call: one e-mail for each notifying
// event whose merchant exists (two merchants, events with and without
// their payloads), none for a pending event or an unknown merchant, each
// the same as Compose writes; and a second call adds nothing.
func TestEnqueueAllBatch(t *testing.T) {
	testdb.Each(t, func(t *testing.T, url string) {
		db, sys, ob, m := newMailEnv(t, url,
			[3]string{"m_1", "Ada's Shop", "m_1@example.com"}, [3]string{"m_2", "Kofi Ltd", "m_2@example.com"})
		c := db.Client(sys)
		emit := func(merchant, typ string) *ent.Event {
			ev, _ := eventtest.Emit(t, db, ob, tenant.Tenant{MerchantID: merchant, Mode: tenant.Test}, typ)
			return ev
		}
		a := emit("m_1", "deposit.success")
		b := emit("m_2", "withdrawal.failed")
		cc := emit("m_1", "withdrawal.success")
		pending := emit("m_1", "withdrawal.pending")
		orphan := emit("m_gone", "deposit.success")
		names := map[string]string{"m_1": "Ada's Shop", "m_2": "Kofi Ltd"}
		batch := []*ent.Event{a, b, cc, pending, orphan}
		in := make([]*ent.Event, len(batch))
		for i, ev := range batch {
			cp := *ev
			if i%2 == 0 {
				cp.Payload = nil // as fan-out hands them
			}
			in[i] = &cp
		}
		for range 2 {
			if err := db.Tx(sys, func(ctx context.Context) error { return m.EnqueueAll(ctx, in) }); err != nil {
				t.Fatal(err)
			}
		}
		got, err := c.EmailNotification.Query().All(sys)
		if err != nil || len(got) != 3 {
			t.Fatalf("e-mails queued: %d, %v", len(got), err)
		}
		byEvent := map[string]*ent.EmailNotification{}
		for _, e := range got {
			byEvent[e.EventID] = e
		}
		for _, ev := range []*ent.Event{a, b, cc} {
			e := byEvent[ev.EventID]
			subject, body := mail.Compose(ev, names[ev.MerchantID])
			if e == nil || e.ToAddress != ev.MerchantID+"@example.com" || e.Subject != subject || e.Body != body ||
				e.MerchantID != ev.MerchantID || e.EventType != ev.Type || e.Status != mail.StatusPending {
				t.Errorf("e-mail of %s (%s): %+v; want subject %q", ev.EventID, ev.Type, e, subject)
			}
		}
	})
}
