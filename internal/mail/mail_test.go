package mail_test

import (
	"context"
	"io"
	"mime"
	"mime/quotedprintable"
	"strings"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/internal/mail"
	"merchantpay/internal/mail/smtptest"
)

func TestParseURL(t *testing.T) {
	s, err := mail.ParseURL("smtp://user:p%40ss@mail.example.com:587?from=alerts@pay.example.com")
	if err != nil {
		t.Fatal(err)
	}
	if s.Host != "mail.example.com" || s.Port != "587" || s.TLS || s.Username != "user" || s.Password != "p@ss" || s.From != "alerts@pay.example.com" {
		t.Fatalf("%+v", s)
	}
	s, err = mail.ParseURL("smtps://mail.example.com")
	if err != nil || s.Port != "465" || !s.TLS || s.From != mail.DefaultFrom {
		t.Fatalf("%+v, %v", s, err)
	}
	for _, bad := range []string{"http://mail.example.com", "smtp://", "smtp://h:0", "smtp://h:x", "smtp://h?from=x%0d%0aBcc:y@z", "smtp://u:secret@h:99999"} {
		_, err := mail.ParseURL(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: error repeats the password: %v", bad, err)
		}
	}
}

func TestNotifies(t *testing.T) {
	for typ, want := range map[string]bool{
		"deposit.success": true, "deposit.failed": true, "deposit.refunded": true, "swap.success": true,
		"withdrawal.failed": true, "deposit.pending": false, "swap.pending": false, "withdrawal.pending": false,
	} {
		if mail.Notifies(typ) != want {
			t.Errorf("Notifies(%s) = %v", typ, !want)
		}
	}
}

func sampleEvent() *ent.Event {
	return &ent.Event{
		EventID: "evt_1", Type: "withdrawal.failed", Mode: "live", MerchantID: "m1",
		CreatedAt: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC),
		Payload: []byte(`{"reference":"WTH-1","merchant_reference":"inv-9\r\nBcc: evil@x","status":"failed",` +
			`"amount":12000.50,"currency":"NGN","fee":50,"narration":"Café ☕","reject_reason":"account not found"}`),
	}
}

func TestComposeAndRender(t *testing.T) {
	subject, body := mail.Compose(sampleEvent(), "Acme Pay")
	if subject != "Withdrawal failed: 12000.50 NGN (WTH-1)" {
		t.Fatalf("subject %q", subject)
	}
	for _, want := range []string{"Hello Acme Pay,", "WTH-1", "inv-9 Bcc: evil@x", "12000.50 NGN", "account not found", "evt_1", "2024-05-01T10:00:00.000Z", "Café ☕"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	msg := string(mail.Render("from@x.test", "to@y.test", "Dépôt réussi", body, "evt_1@merchantpay", time.Unix(0, 0)))
	head, rest, _ := strings.Cut(msg, "\r\n\r\n")
	if strings.Contains(head, "evil") || !strings.Contains(head, "Subject: =?utf-8?q?") {
		t.Fatalf("headers:\n%s", head)
	}
	dec := new(mime.WordDecoder)
	for _, line := range strings.Split(head, "\r\n") {
		if v, ok := strings.CutPrefix(line, "Subject: "); ok {
			if s, err := dec.DecodeHeader(v); err != nil || s != "Dépôt réussi" {
				t.Fatalf("subject decodes to %q, %v", s, err)
			}
		}
	}
	plain, err := io.ReadAll(quotedprintable.NewReader(strings.NewReader(rest)))
	if err != nil || !strings.Contains(string(plain), "Café ☕") {
		t.Fatalf("body: %s, %v", plain, err)
	}
}

func TestSMTPSend(t *testing.T) {
	srv := smtptest.New(t)
	s, err := mail.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	msg := mail.Render(s.From, "to@y.test", "Hi", "line\n.dot line\n", "id@x", time.Now())
	if err := s.Send(context.Background(), "to@y.test", msg); err != nil {
		t.Fatal(err)
	}
	srv.FailNext(1)
	if err := s.Send(context.Background(), "to@y.test", msg); err == nil {
		t.Fatal("a refused message reported sent")
	}
	got := srv.Messages()
	if len(got) != 1 || got[0].From != "notify@merchantpay.test" || got[0].To[0] != "to@y.test" {
		t.Fatalf("%+v", got)
	}
	if string(got[0].Data) != string(msg) {
		t.Fatalf("message changed in transit:\n%q\n%q", got[0].Data, msg)
	}
}
