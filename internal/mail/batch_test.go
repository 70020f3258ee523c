package mail_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/emailnotification"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/mail"
	"merchantpay/internal/mail/smtptest"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

// lockedBuffer is a log destination the mailer writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// eventually polls cond until it holds, failing after within.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mailerRun is a database with merchant m_1, n e-mails queued for it, and
// a mailer on smtp sending them (retry schedule a minute apart, on a fake
// clock), stopped when the test ends.
type mailerRun struct {
	db    *store.DB
	sys   context.Context
	clock *clock.Fake
	logs  *lockedBuffer
}

func startMailer(t *testing.T, url string, smtp *mail.SMTP, n int) *mailerRun {
	t.Helper()
	db := testdb.Open(t, url)
	clk := clock.NewFake(time.Now().Truncate(time.Millisecond))
	sys := tenant.System(context.Background())
	now := clk.Now()
	if err := db.Reader().Merchant.Create().SetID("m_1").SetName("Ada's Shop").SetEmail("ada@example.com").
		SetCreatedAt(now).SetUpdatedAt(now).Exec(sys); err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	m := mail.New(db, clk, mail.Config{SMTP: smtp, PollInterval: 20 * time.Millisecond,
		Schedule: []time.Duration{time.Minute, time.Minute, time.Minute}, Log: slog.New(slog.NewTextHandler(logs, nil))})
	ob := events.New(db, clk)
	var evs []*ent.Event
	for range n {
		ev, _ := eventtest.Emit(t, db, ob, tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}, "deposit.success")
		evs = append(evs, ev)
	}
	if err := db.Within(sys, nil, func(ctx context.Context, tx *ent.Tx) error { return m.EnqueueAll(ctx, tx, evs) }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return &mailerRun{db: db, sys: sys, clock: clk, logs: logs}
}

func (r *mailerRun) emails(t *testing.T) []*ent.EmailNotification {
	t.Helper()
	rows, err := r.db.Reader().EmailNotification.Query().Order(ent.Asc(emailnotification.FieldID)).All(r.sys)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// The e-mails due together go over one connection (STARTTLS and AUTH
// once): a message the server refuses does not end it, and is retried.
func TestMailerBatchOneConnection(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		srv := smtptest.NewWith(t, smtptest.Options{TLS: smtptest.StartTLS, Username: "mailer", Password: "pw"})
		srv.FailNext(1)
		r := startMailer(t, url, smtpFor(t, srv, credsURL(srv, "mailer:pw", "starttls=required")), 5)
		eventually(t, 20*time.Second, "the pass recorded", func() bool {
			sent, pending := 0, 0
			for _, e := range r.emails(t) {
				switch {
				case e.Status == mail.StatusSent:
					sent++
				case e.Status == mail.StatusPending && e.Attempts == 1:
					pending++
				}
			}
			return sent == 4 && pending == 1
		})
		ss := srv.Sessions()
		if len(ss) != 1 || ss[0].Messages != 4 || !ss[0].StartTLS || !ss[0].Authenticated {
			t.Fatalf("%d connections for 5 e-mails: %+v", len(ss), ss)
		}
		if n := strings.Count(strings.Join(ss[0].Verbs, " "), "AUTH"); n != 1 {
			t.Fatalf("AUTH %d times on one connection: %v", n, ss[0].Verbs)
		}
		r.clock.Advance(2 * time.Minute)
		eventually(t, 20*time.Second, "the refused e-mail retried", func() bool {
			for _, e := range r.emails(t) {
				if e.Status != mail.StatusSent {
					return false
				}
			}
			return true
		})
		if n := len(srv.Messages()); n != 5 {
			t.Fatalf("%d messages delivered, want 5", n)
		}
	})
}

// starttls=required and a server that does not offer STARTTLS: nothing
// is sent to it (no AUTH, no MAIL), the e-mail stays queued and is
// retried on schedule, and neither the log nor the stored error shows
// the password.
func TestMailerRequiredSTARTTLSRefused(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		const password = "pa55-w0rd-xyz"
		srv := smtptest.NewWith(t, smtptest.Options{Username: "mailer", Password: password})
		r := startMailer(t, url, smtpFor(t, srv, credsURL(srv, "mailer:"+password, "starttls=required")), 1)
		var e *ent.EmailNotification
		eventually(t, 20*time.Second, "the first attempt recorded", func() bool {
			rows := r.emails(t)
			if len(rows) != 1 {
				return false
			}
			e = rows[0]
			return e.Attempts == 1
		})
		if e.Status != mail.StatusPending || e.LastError == nil || !strings.Contains(*e.LastError, "STARTTLS") ||
			strings.Contains(*e.LastError, password) {
			t.Fatalf("after the refusal: status %s, error %v", e.Status, deref(e.LastError))
		}
		t.Logf("stored error: %s", *e.LastError)
		logs := r.logs.String()
		if !strings.Contains(logs, "will retry") || !strings.Contains(logs, "STARTTLS") || strings.Contains(logs, password) {
			t.Fatalf("log: %s", logs)
		}
		r.clock.Advance(2 * time.Minute)
		eventually(t, 20*time.Second, "the retry", func() bool { return r.emails(t)[0].Attempts == 2 })
		ss := srv.Sessions()
		if len(ss) != 2 {
			t.Fatalf("%d connections for two attempts", len(ss))
		}
		for _, s := range ss {
			for _, v := range s.Verbs {
				if v == "AUTH" || v == "MAIL" {
					t.Fatalf("sent %s to a server without STARTTLS: %v", v, s.Verbs)
				}
			}
		}
		if n := len(srv.Messages()); n != 0 {
			t.Fatalf("%d messages delivered", n)
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}
