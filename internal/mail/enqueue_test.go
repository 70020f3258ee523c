package mail_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db, sys, ob, m := newMailEnv(t, url, [3]string{"m_1", "Ada's Shop", "ada@example.com"})
		c := db.Reader()
		whole, _ := eventtest.Emit(t, db, ob, tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}, "deposit.success")
		orphan, _ := eventtest.Emit(t, db, ob, tenant.Tenant{MerchantID: "m_gone", Mode: tenant.Test}, "deposit.success")
		if len(whole.Payload) == 0 {
			t.Fatal("the event has no payload to test with")
		}
		for _, ev := range []*ent.Event{whole, orphan} {
			bare := *ev
			bare.Payload = nil
			if err := db.Within(sys, nil, func(ctx context.Context, tx *ent.Tx) error { return m.Enqueue(ctx, tx, &bare) }); err != nil {
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
			e.MerchantID != "m_1" || e.Mode != tenant.Test || e.Status != mail.StatusKept {
			t.Fatalf("e-mail %+v; want subject %q, body %q", e, subject, body)
		}
		if len(subject) == 0 || !containsAll(body, "1500.5", "NGN", "Invoice <42> & co") {
			t.Fatalf("the e-mail does not show the payload: %q", body)
		}
		// The whole event writes the same e-mail (a second call keeps the first).
		if _, err := c.EmailNotification.Delete().Where(emailnotification.ID(e.ID)).Exec(sys); err != nil {
			t.Fatal(err)
		}
		if err := db.Within(sys, nil, func(ctx context.Context, tx *ent.Tx) error { return m.Enqueue(ctx, tx, whole) }); err != nil {
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
	return newMailEnvSMTP(t, url, nil, merchants...)
}

// newMailEnvSMTP is newMailEnv with a mailer on smtp (nil: none). Nothing
// runs the mailer, so nothing is sent.
func newMailEnvSMTP(t *testing.T, url string, smtp *mail.SMTP, merchants ...[3]string) (*store.DB, context.Context, *events.Outbox, *mail.Mailer) {
	t.Helper()
	db := testdb.Open(t, url)
	clk := clock.NewFake(time.Now().Truncate(time.Millisecond))
	sys := tenant.System(context.Background())
	now := clk.Now()
	for _, mer := range merchants {
		if err := db.Reader().Merchant.Create().SetID(mer[0]).SetName(mer[1]).SetEmail(mer[2]).
			SetCreatedAt(now).SetUpdatedAt(now).Exec(sys); err != nil {
			t.Fatal(err)
		}
	}
	return db, sys, events.New(db, clk), mail.New(db, clk, mail.Config{SMTP: smtp})
}

// A fan-out batch is queued in one call: one e-mail for each notifying
// event whose merchant exists (two merchants, events with and without
// their payloads), none for a pending event or an unknown merchant, each
// the same as Compose writes; and a second call adds nothing. With SMTP
// they wait to be sent; without it they are written kept, nothing left
// for the mailer to lease.
func TestEnqueueAllBatch(t *testing.T) {
	smtp, err := mail.ParseURL("smtp://mail.example.com:587")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		smtp *mail.SMTP
		want string
	}{{"smtp", smtp, mail.StatusPending}, {"no smtp", nil, mail.StatusKept}} {
		t.Run(tc.name, func(t *testing.T) { testEnqueueInBatch(t, tc.smtp, tc.want) })
	}
}

func testEnqueueInBatch(t *testing.T, smtp *mail.SMTP, want string) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db, sys, ob, m := newMailEnvSMTP(t, url, smtp,
			[3]string{"m_1", "Ada's Shop", "m_1@example.com"}, [3]string{"m_2", "Kofi Ltd", "m_2@example.com"})
		c := db.Reader()
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
			if err := db.Within(sys, nil, func(ctx context.Context, tx *ent.Tx) error { return m.EnqueueAll(ctx, tx, in) }); err != nil {
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
				e.MerchantID != ev.MerchantID || e.EventType != ev.Type || e.Status != want ||
				(e.NextAttemptAt != nil) != (want == mail.StatusPending) || e.LeaseOwner != nil {
				t.Errorf("e-mail of %s (%s): %+v; want subject %q, status %s", ev.EventID, ev.Type, e, subject, want)
			}
		}
	})
}

// Without SMTP the kept e-mail is logged once its transaction commits, and
// not at all when it rolls back (nothing was kept).
func TestKeptLoggedAfterCommit(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db, sys, ob, _ := newMailEnv(t, url, [3]string{"m_1", "Ada's Shop", "ada@example.com"})
		var logs bytes.Buffer
		m := mail.New(db, clock.NewFake(time.Now()), mail.Config{Log: slog.New(slog.NewTextHandler(&logs, nil))})
		ev, _ := eventtest.Emit(t, db, ob, tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}, "deposit.success")
		rollback := errors.New("rolled back")
		if err := db.Within(sys, nil, func(ctx context.Context, tx *ent.Tx) error {
			if err := m.Enqueue(ctx, tx, ev); err != nil {
				return err
			}
			return rollback
		}); !errors.Is(err, rollback) {
			t.Fatal(err)
		}
		if n, err := db.Reader().EmailNotification.Query().Count(sys); err != nil || n != 0 || logs.Len() != 0 {
			t.Fatalf("rolled back: %d e-mails, %v; logged %q", n, err, logs.String())
		}
		if err := db.Within(sys, nil, func(ctx context.Context, tx *ent.Tx) error { return m.Enqueue(ctx, tx, ev) }); err != nil {
			t.Fatal(err)
		}
		subject, _ := mail.Compose(ev, "Ada's Shop")
		line := logs.String()
		if strings.Count(line, "e-mail kept (SMTP_URL not set)") != 1 || !strings.Contains(line, "to=ada@example.com") ||
			!strings.Contains(line, ev.EventID) || !strings.Contains(line, subject[:10]) {
			t.Fatalf("log after commit: %q", line)
		}
	})
}
