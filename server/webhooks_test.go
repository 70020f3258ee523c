package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/emailnotification"
	"merchantpay/ent/eventfanout"
	"merchantpay/internal/apperr"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/hookwire"
	"merchantpay/internal/mail"
	"merchantpay/internal/mail/smtptest"
	"merchantpay/internal/nodetest"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/internal/webhooks"
	"merchantpay/server/servertest"
)

// fast makes the event workers poll often, so advancing the fake clock
// shows at once; the retry schedule is short.
var fast = []servertest.Option{
	servertest.With("EVENTS_POLL_INTERVAL", "20ms"),
	servertest.With("WEBHOOK_RETRY_SCHEDULE", "1s,1s"),
}

// hit is one request a receiver got.
type hit struct {
	path   string
	header http.Header
	body   []byte
}

// receiver is a webhook endpoint under test. respond picks the status of
// the n-th request (1-based); 0 drops the connection without an answer.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	// respond is read under mu.
	respond func(n int) int
	hits    []hit
}

func newReceiver(t *testing.T, respond func(n int) int) *receiver {
	r := &receiver{respond: respond}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.hits = append(r.hits, hit{path: req.URL.Path, header: req.Header.Clone(), body: body})
		status := r.respond(len(r.hits))
		r.mu.Unlock()
		if status == 0 {
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "answer %d", status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

var sys = tenant.System(context.Background())

func always(status int) func(int) int { return func(int) int { return status } }

func (r *receiver) setRespond(f func(int) int) {
	r.mu.Lock()
	r.respond = f
	r.mu.Unlock()
}

func (r *receiver) got() []hit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hit(nil), r.hits...)
}

func (r *receiver) waitHits(t *testing.T, n int) []hit {
	t.Helper()
	servertest.Eventually(t, 10*time.Second, fmt.Sprintf("%d webhook requests", n), func() bool { return len(r.got()) >= n })
	return r.got()
}

// endpoint creates an endpoint over REST and returns its id and secret.
func endpoint(t *testing.T, e *servertest.Env, key, url string, events ...string) (id, secret string) {
	t.Helper()
	body := map[string]any{"url": url}
	if events != nil {
		body["events"] = events
	}
	d := e.REST("POST", "/webhooks", key, body).Expect(201).Data()
	return d["id"].(string), d["secret"].(string)
}

func testTenant(m servertest.Merchant) tenant.Tenant {
	return tenant.Tenant{MerchantID: m.ID, Mode: tenant.Test}
}

func emit(t *testing.T, e *servertest.Env, tn tenant.Tenant, typ string) (*ent.Event, *ent.Transaction) {
	t.Helper()
	return eventtest.Emit(t, e.App.DB, e.App.Outbox, tn, typ)
}

func deliveries(t *testing.T, e *servertest.Env, tn tenant.Tenant, eventID string) []webhooks.Delivery {
	t.Helper()
	ds, err := e.App.Webhooks.Deliveries(tenant.With(context.Background(), tn), nil, eventID)
	if err != nil {
		t.Fatalf("deliveries: %v", err)
	}
	return ds
}

// waitDelivery waits until the event's only delivery matches cond.
func waitDelivery(t *testing.T, e *servertest.Env, tn tenant.Tenant, eventID, what string, cond func(webhooks.Delivery) bool) webhooks.Delivery {
	t.Helper()
	var last []webhooks.Delivery
	servertest.Eventually(t, 10*time.Second, what, func() bool {
		last = deliveries(t, e, tn, eventID)
		return len(last) == 1 && cond(last[0])
	})
	return last[0]
}

func verify(t *testing.T, e *servertest.Env, secret string, h hit) {
	t.Helper()
	s, err := hookwire.NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(h.header, h.body, e.Clock.Now(), hookwire.DefaultTolerance); err != nil {
		t.Fatalf("signature does not verify: %v", err)
	}
}

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func TestWebhookEndpointsREST(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		other := e.Merchant("Other Co")

		r := e.REST("POST", "/webhooks", m.TestSecret, map[string]any{"url": "https://hooks.example.com/in"}).Expect(201)
		d := r.Data()
		id, _ := d["id"].(string)
		secret, _ := d["secret"].(string)
		if id == "" || !strings.HasPrefix(secret, "whsec_") || d["enabled"] != true || d["url"] != "https://hooks.example.com/in" {
			t.Fatalf("created: %s", r.Body)
		}
		if ev, ok := d["events"].([]any); !ok || len(ev) != 0 {
			t.Fatalf("events = %v, want []", d["events"])
		}
		if _, err := time.Parse("2006-01-02T15:04:05.000Z", fmt.Sprint(d["created_at"])); err != nil {
			t.Fatalf("created_at %v: %v", d["created_at"], err)
		}
		if _, err := hookwire.NewSigner(secret); err != nil {
			t.Fatalf("secret unusable: %v", err)
		}
		d2 := e.REST("POST", "/webhooks", m.TestSecret, map[string]any{
			"url": "http://hooks.example.com/deposits", "events": []string{"deposit.success", "deposit.failed", "deposit.success"},
		}).Expect(201).Data()
		if got := fmt.Sprint(d2["events"]); got != "[deposit.success deposit.failed]" {
			t.Fatalf("events = %s", got)
		}

		// Every bad field at once.
		bad := e.REST("POST", "/webhooks", m.TestSecret, map[string]any{"url": "ftp://x.example.com", "events": []any{7, "deposit.done", "swap.success"}}).Expect(400)
		fields := bad.Fields()
		sort.Strings(fields)
		if bad.Code() != "VALIDATION_ERROR" || fmt.Sprint(fields) != "[events[0] events[1] url]" {
			t.Fatalf("bad fields: %s", bad.Body)
		}
		if f := e.REST("POST", "/webhooks", m.TestSecret, map[string]any{}).Expect(400).Fields(); fmt.Sprint(f) != "[url]" {
			t.Fatalf("missing url: %v", f)
		}

		// The list never shows secrets.
		list := e.REST("GET", "/webhooks", m.TestSecret, nil).Expect(200)
		if len(list.List()) != 2 || strings.Contains(string(list.Body), "whsec_") || list.JSON["meta"] == nil {
			t.Fatalf("list: %s", list.Body)
		}
		var first map[string]any
		for _, x := range list.List() {
			if x.(map[string]any)["id"] == id {
				first = x.(map[string]any)
			}
		}
		if first == nil || first["id"] != id || first["enabled"] != true || first["url"] != "https://hooks.example.com/in" {
			t.Fatalf("list entry: %v", first)
		}
		for _, k := range []string{"id", "url", "events", "enabled", "created_at"} {
			if _, ok := first[k]; !ok {
				t.Errorf("list entry lacks %s", k)
			}
		}

		// Roll with no body at all.
		rolled := e.REST("POST", "/webhooks/"+id+"/roll-secret", m.TestSecret, nil).Expect(200).Data()
		if rolled["id"] != id || rolled["secret"] == secret || !strings.HasPrefix(fmt.Sprint(rolled["secret"]), "whsec_") || len(rolled) != 2 {
			t.Fatalf("rolled: %v", rolled)
		}

		// Another merchant, or the other mode, sees nothing.
		e.REST("POST", "/webhooks/"+id+"/roll-secret", other.TestSecret, nil).Expect(404)
		e.REST("DELETE", "/webhooks/"+id, other.TestSecret, nil).Expect(404)
		e.REST("DELETE", "/webhooks/"+id, m.LiveSecret, nil).Expect(404)
		if n := len(e.REST("GET", "/webhooks", other.TestSecret, nil).Expect(200).List()); n != 0 {
			t.Fatalf("other merchant lists %d endpoints", n)
		}

		del := e.REST("DELETE", "/webhooks/"+id, m.TestSecret, nil).Expect(200).Data()
		if del["id"] != id || del["deleted"] != true {
			t.Fatalf("delete: %v", del)
		}
		e.REST("DELETE", "/webhooks/"+id, m.TestSecret, nil).Expect(404)
		e.REST("POST", "/webhooks/"+id+"/roll-secret", m.TestSecret, nil).Expect(404)
		if n := len(e.REST("GET", "/webhooks", m.TestSecret, nil).Expect(200).List()); n != 1 {
			t.Fatalf("%d endpoints after delete, want 1", n)
		}
	})
}

func TestWebhookDeliverySignedAndFiltered(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		tn := testTenant(m)
		all := newReceiver(t, always(200))
		deposits := newReceiver(t, always(204))
		swaps := newReceiver(t, always(200))
		_, secretAll := endpoint(t, e, m.TestSecret, all.srv.URL+"/hooks")
		_, secretDep := endpoint(t, e, m.TestSecret, deposits.srv.URL, "deposit.success")
		endpoint(t, e, m.TestSecret, swaps.srv.URL, "swap.success")

		ev, tx := emit(t, e, tn, "deposit.success")
		h := all.waitHits(t, 1)[0]
		verify(t, e, secretAll, h)
		verify(t, e, secretDep, deposits.waitHits(t, 1)[0])
		if h.header.Get("webhook-id") != ev.EventID || h.header.Get("Content-Type") != "application/json" {
			t.Fatalf("headers: %v", h.header)
		}
		var body struct {
			ID        string          `json:"id"`
			Event     string          `json:"event"`
			CreatedAt string          `json:"created_at"`
			Data      json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(h.body, &body); err != nil {
			t.Fatal(err)
		}
		if body.ID != ev.EventID || body.Event != "deposit.success" || body.CreatedAt != ev.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z") {
			t.Fatalf("body: %s", h.body)
		}
		if !bytes.Equal(body.Data, ev.Payload) {
			t.Fatalf("data %s\nwant the stored payload %s", body.Data, ev.Payload)
		}
		got := e.REST("GET", "/transactions/"+tx.Reference, m.TestSecret, nil).Expect(200)
		if !reflect.DeepEqual(decodeAny(t, body.Data), got.JSON["data"]) {
			t.Fatalf("data %s\nGET shows %s", body.Data, got.Body)
		}

		var succeeded int
		servertest.Eventually(t, 10*time.Second, "both deliveries succeeded", func() bool {
			list := deliveries(t, e, tn, ev.EventID)
			succeeded = 0
			for _, d := range list {
				if d.Status == webhooks.StatusSucceeded && len(d.Attempts) == 1 {
					succeeded++
				}
			}
			return len(list) == 2 && succeeded == 2
		})
		for _, d := range deliveries(t, e, tn, ev.EventID) {
			a := d.Attempts[0]
			if a.StatusCode == nil || (*a.StatusCode != 200 && *a.StatusCode != 204) || !a.Success || a.Number != 1 {
				t.Fatalf("attempt: %+v", a)
			}
			if *a.StatusCode == 200 && a.ResponseBody != "answer 200" {
				t.Fatalf("response body %q", a.ResponseBody)
			}
		}
		if n := len(swaps.got()); n != 0 {
			t.Fatalf("the swap.success endpoint got %d requests", n)
		}
		// A pending event goes only to the endpoint that takes everything.
		pending, _ := emit(t, e, tn, "deposit.pending")
		hits := all.waitHits(t, 2)
		if hits[1].header.Get("webhook-id") != pending.EventID {
			t.Fatalf("second hit is %s", hits[1].header.Get("webhook-id"))
		}
		if len(deliveries(t, e, tn, pending.EventID)) != 1 || len(deposits.got()) != 1 {
			t.Fatal("a filtered endpoint got deposit.pending")
		}
	}, fast...)
}

func TestWebhookRetryKeepsID(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		tn := testTenant(m)
		rcv := newReceiver(t, func(n int) int {
			if n <= 2 {
				return 500
			}
			return 200
		})
		_, secret := endpoint(t, e, m.TestSecret, rcv.srv.URL)
		ev, _ := emit(t, e, tn, "deposit.success")
		for n := 1; n <= 2; n++ {
			waitDelivery(t, e, tn, ev.EventID, fmt.Sprintf("attempt %d recorded", n), func(d webhooks.Delivery) bool {
				return len(d.Attempts) == n && d.Status == webhooks.StatusPending
			})
			e.Clock.Advance(1200 * time.Millisecond) // 1s ± 10% jitter
		}
		d := waitDelivery(t, e, tn, ev.EventID, "success on the third attempt", func(d webhooks.Delivery) bool {
			return d.Status == webhooks.StatusSucceeded
		})
		if len(d.Attempts) != 3 || d.AttemptCount != 3 || *d.Attempts[0].StatusCode != 500 || *d.Attempts[2].StatusCode != 200 {
			t.Fatalf("delivery: %+v", d)
		}
		hits := rcv.got()
		if len(hits) != 3 {
			t.Fatalf("%d hits", len(hits))
		}
		for i, h := range hits {
			if h.header.Get("webhook-id") != ev.EventID {
				t.Fatalf("hit %d: webhook-id %q, want %s", i, h.header.Get("webhook-id"), ev.EventID)
			}
			if !bytes.Equal(h.body, hits[0].body) {
				t.Fatalf("hit %d: body changed", i)
			}
			verify(t, e, secret, h)
		}
		if hits[0].header.Get("webhook-timestamp") == hits[2].header.Get("webhook-timestamp") {
			t.Fatal("the retry was signed with the first attempt's timestamp")
		}
	}, fast...)
}

func TestWebhookGoneDisablesEndpoint(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		tn := testTenant(m)
		rcv := newReceiver(t, always(410))
		id, _ := endpoint(t, e, m.TestSecret, rcv.srv.URL)
		ev, _ := emit(t, e, tn, "deposit.success")
		d := waitDelivery(t, e, tn, ev.EventID, "a failed delivery", func(d webhooks.Delivery) bool { return d.Status == webhooks.StatusFailed })
		if len(d.Attempts) != 1 || *d.Attempts[0].StatusCode != 410 {
			t.Fatalf("delivery: %+v", d)
		}
		list := e.REST("GET", "/webhooks", m.TestSecret, nil).Expect(200).List()
		if ep := list[0].(map[string]any); ep["id"] != id || ep["enabled"] != false {
			t.Fatalf("endpoint after 410: %v", ep)
		}
		// A disabled endpoint gets no more deliveries.
		ev2, _ := emit(t, e, tn, "deposit.success")
		servertest.Eventually(t, 10*time.Second, "the second event fanned out", func() bool {
			queued, err := e.App.DB.Reader().EventFanout.Query().Where(eventfanout.ID(ev2.ID)).Exist(sys)
			return err == nil && !queued
		})
		if n := len(deliveries(t, e, tn, ev2.EventID)); n != 0 {
			t.Fatalf("%d deliveries to a disabled endpoint", n)
		}
		if n := len(rcv.got()); n != 1 {
			t.Fatalf("%d requests, want 1", n)
		}
	}, fast...)
}

func TestWebhookDeadReceiverThenRedeliver(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		tn := testTenant(m)
		rcv := newReceiver(t, always(0)) // drops every connection
		_, secret := endpoint(t, e, m.TestSecret, rcv.srv.URL)
		ev, _ := emit(t, e, tn, "withdrawal.failed")
		// The schedule 1s,1s allows three attempts in all.
		for n := 1; n <= 2; n++ {
			waitDelivery(t, e, tn, ev.EventID, fmt.Sprintf("attempt %d", n), func(d webhooks.Delivery) bool { return len(d.Attempts) == n })
			e.Clock.Advance(1200 * time.Millisecond)
		}
		d := waitDelivery(t, e, tn, ev.EventID, "failed", func(d webhooks.Delivery) bool { return d.Status == webhooks.StatusFailed })
		if len(d.Attempts) != 3 || d.NextAttemptAt != nil || d.CompletedAt == nil {
			t.Fatalf("delivery: %+v", d)
		}
		for _, a := range d.Attempts {
			if a.StatusCode != nil || a.Error == nil || a.Success {
				t.Fatalf("attempt: %+v", a)
			}
		}

		rcv.setRespond(always(200))
		ctx := tenant.With(context.Background(), tn)
		if _, err := e.App.Webhooks.Redeliver(tenant.With(context.Background(), tenant.Tenant{MerchantID: m.ID, Mode: tenant.Live}), nil, ev.EventID); !apperr.Is(err, apperr.NotFound) {
			t.Fatalf("redeliver from the other mode: %v", err)
		}
		re, err := e.App.Webhooks.Redeliver(ctx, nil, ev.EventID)
		if err != nil {
			t.Fatal(err)
		}
		if len(re) != 1 || re[0].Status != webhooks.StatusPending {
			t.Fatalf("after redeliver: %+v", re)
		}
		d = waitDelivery(t, e, tn, ev.EventID, "redelivered", func(d webhooks.Delivery) bool { return d.Status == webhooks.StatusSucceeded })
		if len(d.Attempts) != 4 || d.AttemptCount != 4 || d.Attempts[3].Number != 4 {
			t.Fatalf("delivery: %+v", d)
		}
		hits := rcv.got()
		last := hits[len(hits)-1]
		if last.header.Get("webhook-id") != ev.EventID {
			t.Fatalf("redelivery webhook-id %q", last.header.Get("webhook-id"))
		}
		verify(t, e, secret, last)
	}, fast...)
}

func TestWebhookMerchantIsolation(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		a := e.Merchant("Acme Pay")
		b := e.Merchant("Bee Shop")
		ra, rb, raLive := newReceiver(t, always(200)), newReceiver(t, always(200)), newReceiver(t, always(200))
		endpoint(t, e, a.TestSecret, ra.srv.URL)
		endpoint(t, e, b.TestSecret, rb.srv.URL)
		endpoint(t, e, a.LiveSecret, raLive.srv.URL)
		evA, _ := emit(t, e, testTenant(a), "deposit.success")
		evB, _ := emit(t, e, testTenant(b), "deposit.success")
		if h := ra.waitHits(t, 1); h[0].header.Get("webhook-id") != evA.EventID {
			t.Fatal("A's receiver got another event")
		}
		if h := rb.waitHits(t, 1); h[0].header.Get("webhook-id") != evB.EventID {
			t.Fatal("B's receiver got another event")
		}
		// One more of A's, so "nothing else arrived" is not a race.
		evA2, _ := emit(t, e, testTenant(a), "deposit.failed")
		ra.waitHits(t, 2)
		if len(ra.got()) != 2 || len(rb.got()) != 1 || len(raLive.got()) != 0 || ra.got()[1].header.Get("webhook-id") != evA2.EventID {
			t.Fatalf("hits: A %d, B %d, A live %d", len(ra.got()), len(rb.got()), len(raLive.got()))
		}
		if _, err := e.App.Webhooks.Deliveries(tenant.With(context.Background(), testTenant(b)), nil, evA.EventID); !apperr.Is(err, apperr.NotFound) {
			t.Fatalf("B reads A's deliveries: %v", err)
		}
		if _, err := e.App.Webhooks.Redeliver(tenant.With(context.Background(), testTenant(b)), nil, evA.EventID); !apperr.Is(err, apperr.NotFound) {
			t.Fatalf("B redelivers A's event: %v", err)
		}
	}, fast...)
}

func TestEmailNotification(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		smtp := smtptest.New(t)
		e := servertest.New(t, url, append(fast, servertest.With("SMTP_URL", smtp.URL()))...)
		m := e.Merchant("Acme Pay")
		tn := testTenant(m)
		smtp.FailNext(1) // the first try is refused, the retry goes through
		emit(t, e, tn, "deposit.pending")
		ev, tx := emit(t, e, tn, "deposit.success")
		var msgs []smtptest.Message
		servertest.Eventually(t, 10*time.Second, "an e-mail after the first refusal", func() bool {
			if got, err := e.App.DB.Reader().EmailNotification.Query().
				Where(emailnotification.EventID(ev.EventID), emailnotification.Attempts(1)).Exist(sys); err == nil && got {
				e.Clock.Advance(1200 * time.Millisecond)
			}
			msgs = smtp.Messages()
			return len(msgs) >= 1
		})
		if len(msgs) != 1 {
			t.Fatalf("%d messages, want 1 (none for deposit.pending)", len(msgs))
		}
		msg := msgs[0]
		if msg.From != "notify@merchantpay.test" || len(msg.To) != 1 || msg.To[0] != "acme.pay@example.com" {
			t.Fatalf("envelope: from %s to %v", msg.From, msg.To)
		}
		p, err := msg.Parsed()
		if err != nil {
			t.Fatal(err)
		}
		subject := p.Header.Get("Subject")
		body, _ := io.ReadAll(quotedprintable.NewReader(p.Body))
		if !strings.Contains(subject, tx.Reference) || !strings.Contains(subject, "1500.5 NGN") || !strings.Contains(subject, "Deposit succeeded") {
			t.Fatalf("subject %q", subject)
		}
		if !strings.Contains(string(body), ev.EventID) || !strings.Contains(string(body), "Hello Acme Pay") {
			t.Fatalf("body %s", body)
		}
		// The mailer records the send after the server took the message.
		var row *ent.EmailNotification
		servertest.Eventually(t, 10*time.Second, "the e-mail recorded as sent", func() bool {
			row, err = e.App.DB.Reader().EmailNotification.Query().
				Where(emailnotification.EventID(ev.EventID)).Only(sys)
			return err == nil && row.Status == mail.StatusSent
		})
		if row.Attempts != 2 {
			t.Fatalf("row: %+v, %v", row, err)
		}
	})
}

func TestEmailKeptWithoutSMTP(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		// Several at once: a pass records the kept ones together.
		var ids []string
		for range 3 {
			ev, _ := emit(t, e, testTenant(m), "withdrawal.failed")
			ids = append(ids, ev.EventID)
		}
		servertest.Eventually(t, 10*time.Second, "the e-mails kept", func() bool {
			rows, err := e.App.DB.Reader().EmailNotification.Query().
				Where(emailnotification.EventIDIn(ids...)).All(sys)
			if err != nil || len(rows) != len(ids) {
				return false
			}
			for _, row := range rows {
				if row.Status != mail.StatusKept || row.ToAddress != "acme.pay@example.com" ||
					!strings.Contains(row.Subject, "Withdrawal failed") ||
					row.LeaseOwner != nil || row.LeaseUntil != nil || row.NextAttemptAt != nil {
					return false
				}
			}
			return true
		})
	}, fast...)
}

// Two instances on one PostgreSQL: events made on one reach a subscriber on
// the other, and every delivery is sent once while both dispatchers run.
func TestTwoInstances(t *testing.T) {
	url := testdb.MigratedPostgresURL(t)
	e1 := servertest.New(t, url, fast...)
	e2 := servertest.New(t, url, fast...)
	e2.Clock.Set(e1.Clock.Now())
	m := e1.Merchant("Acme Pay")
	tn := testTenant(m)

	rcv := newReceiver(t, func(int) int {
		time.Sleep(5 * time.Millisecond) // lets the dispatchers' claims overlap
		return 200
	})
	endpoint(t, e1, m.TestSecret, rcv.srv.URL)
	endpoint(t, e2, m.TestSecret, rcv.srv.URL+"/second", "deposit.success")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub, err := e2.App.Broker.Subscribe(ctx, tn, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	var ids []string
	for i := 0; i < n; i++ {
		e := e1
		if i%4 == 3 {
			e = e2
		}
		ev, _ := emit(t, e, tn, "deposit.success")
		ids = append(ids, ev.EventID)
	}
	for i := 0; i < n; i++ {
		select {
		case ev := <-sub:
			if ev.EventID != ids[i] {
				t.Fatalf("subscriber on instance 2: event %d is %s, want %s", i, ev.EventID, ids[i])
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("subscriber on instance 2 got %d of %d events", i, n)
		}
	}
	rcv.waitHits(t, 2*n)
	servertest.Eventually(t, 10*time.Second, "every delivery succeeded", func() bool {
		for _, id := range ids {
			for _, d := range deliveries(t, e1, tn, id) {
				if d.Status != webhooks.StatusSucceeded {
					return false
				}
			}
		}
		return true
	})
	// Sent once: one request per event and endpoint, one attempt each.
	hits := rcv.got()
	if len(hits) != 2*n {
		t.Fatalf("%d requests for %d deliveries", len(hits), 2*n)
	}
	sent := map[string]int{}
	for _, h := range hits {
		sent[h.header.Get("webhook-id")+" "+h.path]++
	}
	for _, id := range ids {
		if sent[id+" /"] != 1 || sent[id+" /second"] != 1 {
			t.Fatalf("%s sent %d and %d times, want once to each endpoint", id, sent[id+" /"], sent[id+" /second"])
		}
		for _, d := range deliveries(t, e2, tn, id) {
			if len(d.Attempts) != 1 {
				t.Fatalf("delivery %s has %d attempts", d.ID, len(d.Attempts))
			}
		}
	}
}

// The reference implementation (npm standardwebhooks) verifies a delivery.
func TestWebhookVerifiedByStandardWebhooksJS(t *testing.T) {
	nodetest.Dir(t)
	e := servertest.New(t, testdb.MigratedSQLiteURL(t), fast...)
	m := e.Merchant("Acme Pay")
	rcv := newReceiver(t, always(200))
	_, secret := endpoint(t, e, m.TestSecret, rcv.srv.URL)
	ev, _ := emit(t, e, testTenant(m), "deposit.success")
	h := rcv.waitHits(t, 1)[0]
	in, err := json.Marshal(map[string]any{
		"secret": secret,
		"headers": map[string]string{
			"webhook-id":        h.header.Get("webhook-id"),
			"webhook-timestamp": h.header.Get("webhook-timestamp"),
			"webhook-signature": h.header.Get("webhook-signature"),
		},
		"body": string(h.body),
	})
	if err != nil {
		t.Fatal(err)
	}
	out := nodetest.Run(t, 30*time.Second, in, "verify.mjs")
	var payload struct {
		ID   string          `json:"id"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(out, &payload); err != nil || payload.ID != ev.EventID {
		t.Fatalf("verified payload %s (%v)", out, err)
	}
}
