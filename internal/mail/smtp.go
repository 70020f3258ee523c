// Package mail sends the merchant e-mail notifications of CONTRACT 6: on
// *.success, *.failed and *.refunded events an e-mail goes to the merchant's
// address through SMTP (SMTP_URL). Every message is first kept in the
// database (queued in the dispatcher's fan-out transaction) and sent after
// commit with retries; without SMTP it is kept and logged, never dropped.
package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultFrom is the sender when SMTP_URL names none.
const DefaultFrom = "no-reply@merchantpay.localhost"

// sendTimeout bounds one SMTP conversation.
const sendTimeout = 30 * time.Second

// SMTP is a parsed SMTP_URL:
//
//	smtp://[user:password@]host[:port][?from=addr]   (port 25; STARTTLS when offered)
//	smtps://[user:password@]host[:port][?from=addr]  (port 465; TLS from the start)
type SMTP struct {
	Host     string
	Port     string
	TLS      bool
	Username string
	Password string
	From     string
	// HelloName is sent in EHLO; "localhost" when empty.
	HelloName string
	// TLSConfig overrides the TLS settings (tests); nil verifies Host.
	TLSConfig *tls.Config
}

// ParseURL reads SMTP_URL. Error messages never repeat the password.
func ParseURL(raw string) (*SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("SMTP_URL is not a URL such as smtp://mail.example.com:587")
	}
	s := &SMTP{Host: u.Hostname(), Port: u.Port(), From: DefaultFrom}
	switch u.Scheme {
	case "smtp":
		if s.Port == "" {
			s.Port = "25"
		}
	case "smtps":
		s.TLS = true
		if s.Port == "" {
			s.Port = "465"
		}
	default:
		return nil, errors.New("SMTP_URL must start with smtp:// or smtps://")
	}
	if s.Host == "" {
		return nil, errors.New("SMTP_URL must name a host, as in smtp://mail.example.com:587")
	}
	if n, err := strconv.Atoi(s.Port); err != nil || n < 1 || n > 65535 {
		return nil, errors.New("SMTP_URL port must be a number from 1 to 65535")
	}
	if u.User != nil {
		s.Username = u.User.Username()
		s.Password, _ = u.User.Password()
	}
	if f := u.Query().Get("from"); f != "" {
		if strings.ContainsAny(f, "\r\n<>") || !strings.Contains(f, "@") {
			return nil, errors.New("SMTP_URL from= must be an e-mail address")
		}
		s.From = f
	}
	return s, nil
}

// Send delivers one message (the full RFC 5322 text) to one recipient.
func (s *SMTP) Send(ctx context.Context, to string, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	addr := net.JoinHostPort(s.Host, s.Port)
	tlsConf := s.TLSConfig
	if tlsConf == nil {
		tlsConf = &tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12}
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("smtp: connect %s: %w", addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// Closing the connection is what interrupts a stuck conversation.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if s.TLS {
		conn = tls.Client(conn, tlsConf)
	}
	c, err := smtp.NewClient(conn, s.Host)
	if err != nil {
		conn.Close()
		return fmt.Errorf("smtp: %s: %w", addr, err)
	}
	defer c.Close()
	hello := s.HelloName
	if hello == "" {
		hello = "localhost"
	}
	if err := c.Hello(hello); err != nil {
		return fmt.Errorf("smtp: EHLO: %w", err)
	}
	if !s.TLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsConf); err != nil {
				return fmt.Errorf("smtp: STARTTLS: %w", err)
			}
		}
	}
	if s.Username != "" {
		// PlainAuth refuses to send the password over a connection that is
		// neither TLS nor to localhost.
		if err := c.Auth(smtp.PlainAuth("", s.Username, s.Password, s.Host)); err != nil {
			return fmt.Errorf("smtp: AUTH: %w", err)
		}
	}
	if err := c.Mail(s.From); err != nil {
		return fmt.Errorf("smtp: MAIL FROM: %w", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fmt.Errorf("smtp: RCPT TO: %w", err)
	}
	w, err := c.Data()
	if err != nil {
		return fmt.Errorf("smtp: DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("smtp: writing message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp: message refused: %w", err)
	}
	_ = c.Quit()
	return nil
}
