package mail_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/mail"
	"merchantpay/internal/mail/smtptest"
)

// smtpFor parses rawURL and trusts srv's self-signed certificate (the
// test hook; nothing else turns verification off).
func smtpFor(t *testing.T, srv *smtptest.Server, rawURL string) *mail.SMTP {
	t.Helper()
	s, err := mail.ParseURL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	s.TLSConfig = srv.ClientTLS()
	return s
}

// credsURL is srv's URL with a user name, a password and extra query.
func credsURL(srv *smtptest.Server, userinfo, query string) string {
	u := srv.URL()
	scheme, rest, _ := strings.Cut(u, "://")
	u = scheme + "://" + userinfo + "@" + rest
	if query != "" {
		u += "&" + query
	}
	return u
}

func sendOne(t *testing.T, s *mail.SMTP) error {
	t.Helper()
	msg := mail.Render(s.From, "to@y.test", "Hi", "line\n.dot line\n", "id@x", time.Now())
	return s.Send(context.Background(), "to@y.test", msg)
}

// smtps:// speaks TLS from the first byte (a handshake record, before any
// greeting), verifies the server's certificate, and delivers the message
// unchanged.
func TestSMTPImplicitTLS(t *testing.T) {
	srv := smtptest.NewWith(t, smtptest.Options{TLS: smtptest.Implicit})
	s := smtpFor(t, srv, srv.URL())
	if !s.TLS {
		t.Fatalf("%s: not implicit TLS", srv.URL())
	}
	msg := mail.Render(s.From, "to@y.test", "Hi", "line\n.dot line\n", "id@x", time.Now())
	if err := s.Send(context.Background(), "to@y.test", msg); err != nil {
		t.Fatal(err)
	}
	ss := srv.Sessions()
	if len(ss) != 1 || ss[0].FirstByte != 0x16 || !ss[0].TLS || ss[0].StartTLS || ss[0].Messages != 1 {
		t.Fatalf("sessions: %+v", ss)
	}
	if got := srv.Messages(); len(got) != 1 || string(got[0].Data) != string(msg) {
		t.Fatalf("messages: %+v", got)
	}
	// Without the test's trust in the certificate, it is refused.
	untrusted, err := mail.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if err := sendOne(t, untrusted); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("an unverified certificate accepted: %v", err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d messages after the refused certificate", n)
	}
}

// STARTTLS: starttls=required uses it when offered and refuses a server
// that does not offer it (sending nothing); plain smtp:// uses it when
// offered, sends in the clear when not, and never falls back to the clear
// when the upgrade fails.
func TestSMTPStartTLS(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mode     smtptest.TLSMode
		query    string
		trust    bool
		wantSent bool
		wantTLS  bool
	}{
		{"required, offered", smtptest.StartTLS, "starttls=required", true, true, true},
		{"required, not offered", smtptest.NoTLS, "starttls=required", true, false, false},
		{"opportunistic, offered", smtptest.StartTLS, "", true, true, true},
		{"opportunistic, not offered", smtptest.NoTLS, "", true, true, false},
		{"opportunistic, certificate not trusted", smtptest.StartTLS, "", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := smtptest.NewWith(t, smtptest.Options{TLS: tc.mode})
			u := srv.URL()
			if tc.query != "" {
				u += "&" + tc.query
			}
			s := smtpFor(t, srv, u)
			if !tc.trust {
				s.TLSConfig = nil
			}
			err := sendOne(t, s)
			if (err == nil) != tc.wantSent {
				t.Fatalf("sent: %v, want sent %v", err, tc.wantSent)
			}
			ss := srv.Sessions()
			if len(ss) != 1 {
				t.Fatalf("%d connections", len(ss))
			}
			if ss[0].StartTLS != tc.wantTLS || ss[0].TLS != tc.wantTLS {
				t.Errorf("STARTTLS used: %v, want %v (%+v)", ss[0].StartTLS, tc.wantTLS, ss[0])
			}
			if i := slices.Index(ss[0].Verbs, "MAIL"); tc.wantSent != (i >= 0) {
				t.Errorf("commands %v", ss[0].Verbs)
			} else if tc.wantTLS && slices.Index(ss[0].Verbs, "STARTTLS") > i {
				t.Errorf("mail before STARTTLS: %v", ss[0].Verbs)
			}
			if n := len(srv.Messages()); n != map[bool]int{true: 1}[tc.wantSent] {
				t.Errorf("%d messages delivered", n)
			}
		})
	}
}

// AUTH PLAIN and LOGIN, as auth= says, else PLAIN when offered and LOGIN
// when only it is; the credentials go only after STARTTLS; wrong ones
// send nothing and the error does not repeat the password.
func TestSMTPAuth(t *testing.T) {
	for _, tc := range []struct {
		name     string
		offered  []string
		query    string
		password string
		wantMech string
	}{
		{"plain", []string{"PLAIN", "LOGIN"}, "auth=plain", "s3cret pw", "PLAIN"},
		{"login", []string{"PLAIN", "LOGIN"}, "auth=login", "s3cret pw", "LOGIN"},
		{"either: plain first", []string{"LOGIN", "PLAIN"}, "", "s3cret pw", "PLAIN"},
		{"only login offered", []string{"LOGIN"}, "", "s3cret pw", "LOGIN"},
		{"wrong password", []string{"PLAIN"}, "", "not-the-pw", "PLAIN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := smtptest.NewWith(t, smtptest.Options{TLS: smtptest.StartTLS, Username: "mailer@pay.test",
				Password: "s3cret pw", AuthMechanisms: tc.offered})
			q := "starttls=required"
			if tc.query != "" {
				q += "&" + tc.query
			}
			s := smtpFor(t, srv, credsURL(srv, "mailer%40pay.test:"+strings.ReplaceAll(tc.password, " ", "%20"), q))
			err := sendOne(t, s)
			good := tc.password == "s3cret pw"
			if (err == nil) != good {
				t.Fatalf("sent: %v", err)
			}
			if err != nil && strings.Contains(err.Error(), tc.password) {
				t.Errorf("the error repeats the password: %v", err)
			}
			ss := srv.Sessions()
			if len(ss) != 1 {
				t.Fatalf("%d connections", len(ss))
			}
			got := ss[0]
			if got.AuthMechanism != tc.wantMech || got.AuthUsername != "mailer@pay.test" || got.AuthPassword != tc.password ||
				got.Authenticated != good {
				t.Errorf("AUTH seen: %+v", got)
			}
			if slices.Index(got.Verbs, "AUTH") < slices.Index(got.Verbs, "STARTTLS") || !got.TLS {
				t.Errorf("credentials sent before TLS: %v", got.Verbs)
			}
			if n := len(srv.Messages()); n != map[bool]int{true: 1}[good] {
				t.Errorf("%d messages delivered", n)
			}
		})
	}
}

// SMTP_URL forms: starttls= and auth= are read; wrong ones are named.
func TestParseURLTLSAndAuth(t *testing.T) {
	s, err := mail.ParseURL("smtp://u:p@mail.example.com:587?starttls=required&auth=LOGIN")
	if err != nil || !s.RequireSTARTTLS || s.TLS || s.Auth != mail.AuthLogin {
		t.Fatalf("%+v, %v", s, err)
	}
	s, err = mail.ParseURL("smtp://mail.example.com?starttls=opportunistic")
	if err != nil || s.RequireSTARTTLS {
		t.Fatalf("%+v, %v", s, err)
	}
	for bad, names := range map[string]string{
		"smtp://h?starttls=yes":              "starttls=",
		"smtps://h?starttls=required":        "starttls=",
		"smtp://u:secret@h?auth=cram-md5":    "auth=",
		"smtp://h?auth=plain":                "auth=",
		"smtps://u:secret@h:465?auth=xoauth": "auth=",
	} {
		_, err := mail.ParseURL(bad)
		if err == nil || !strings.Contains(err.Error(), names) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
