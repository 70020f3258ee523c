// Package mail sends the merchant e-mail notifications: on *.success,
// *.failed and *.refunded events an e-mail goes to the merchant's address
// through SMTP (SMTP_URL). Every message is first kept in the database
// (queued in the dispatcher's fan-out transaction) and sent after commit
// with retries; without SMTP it is kept and logged, never dropped.
package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail"
	"github.com/wneessen/go-mail/smtp"
)

// DefaultFrom is the sender when SMTP_URL names none.
const DefaultFrom = "no-reply@merchantpay.localhost"

// sendTimeout bounds setting up a connection (TCP, TLS, EHLO, AUTH), and
// then each message sent over it.
const sendTimeout = 30 * time.Second

// quitTimeout bounds the goodbye of a connection.
const quitTimeout = 5 * time.Second

// Auth mechanisms SMTP_URL's auth= may name.
const (
	AuthPlain = "PLAIN"
	AuthLogin = "LOGIN"
)

// SMTP is a parsed SMTP_URL:
//
//	smtp://[user:password@]host[:port][?from=addr][&starttls=required][&auth=plain|login]   (port 25)
//	smtps://[user:password@]host[:port][?from=addr][&auth=plain|login]                      (port 465)
//
// smtps:// speaks TLS from the first byte. smtp:// upgrades with STARTTLS
// when the server offers it, and with starttls=required refuses a server
// that does not (nothing is sent to it). Either way the server's
// certificate must verify for Host. The user name and password are sent
// only over TLS (or to localhost), with the mechanism auth= names, else
// PLAIN when the server offers it and LOGIN when it offers only that.
type SMTP struct {
	Host string
	Port string
	// TLS is implicit TLS (smtps://).
	TLS bool
	// RequireSTARTTLS refuses an smtp:// server that does not offer STARTTLS.
	RequireSTARTTLS bool
	// Auth is AuthPlain, AuthLogin, or empty: PLAIN when offered, else LOGIN.
	Auth     string
	Username string
	Password string
	From     string
	// HelloName is sent in EHLO; "localhost" when empty.
	HelloName string
	// TLSConfig overrides the TLS settings (tests trust their own
	// certificate with it); nil verifies Host against the system's roots.
	TLSConfig *tls.Config
}

// ParseURL reads SMTP_URL. Error messages never repeat the password.
func ParseURL(raw string) (*SMTP, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("SMTP_URL is not a URL such as smtp://mail.example.com:587?starttls=required")
	}
	s := &SMTP{Host: u.Hostname(), Port: u.Port(), From: DefaultFrom}
	q := u.Query()
	switch u.Scheme {
	case "smtp":
		if s.Port == "" {
			s.Port = "25"
		}
		switch q.Get("starttls") {
		case "", "opportunistic":
		case "required":
			s.RequireSTARTTLS = true
		default:
			return nil, errors.New("SMTP_URL starttls= must be required or opportunistic")
		}
	case "smtps":
		s.TLS = true
		if s.Port == "" {
			s.Port = "465"
		}
		if q.Has("starttls") {
			return nil, errors.New("SMTP_URL starttls= applies to smtp:// only: smtps:// is TLS from the start")
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
	switch a := strings.ToUpper(q.Get("auth")); a {
	case "":
	case AuthPlain, AuthLogin:
		if s.Username == "" {
			return nil, errors.New("SMTP_URL auth= needs a user name and password, as in smtp://user:password@host")
		}
		s.Auth = a
	default:
		return nil, errors.New("SMTP_URL auth= must be plain or login")
	}
	if f := q.Get("from"); f != "" {
		if strings.ContainsAny(f, "\r\n<>") || !strings.Contains(f, "@") {
			return nil, errors.New("SMTP_URL from= must be an e-mail address")
		}
		s.From = f
	}
	return s, nil
}

func (s *SMTP) addr() string { return net.JoinHostPort(s.Host, s.Port) }

// tlsConfig is TLSConfig, or verification of Host; it always names Host,
// which STARTTLS needs.
func (s *SMTP) tlsConfig() *tls.Config {
	if s.TLSConfig == nil {
		return &tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12}
	}
	c := s.TLSConfig.Clone()
	if c.ServerName == "" {
		c.ServerName = s.Host
	}
	return c
}

// Conn is one SMTP connection, set up (TLS, EHLO, AUTH), over which
// messages go one after another.
type Conn struct {
	s    *SMTP
	c    *smtp.Client
	nc   net.Conn
	dead bool
}

// Dial opens a connection: go-mail makes it and runs TLS, EHLO and AUTH
// as the URL says.
func (s *SMTP) Dial(ctx context.Context) (*Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	var mu sync.Mutex
	var nc net.Conn
	ended := false
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		d := &net.Dialer{}
		var c net.Conn
		var err error
		if s.TLS {
			c, err = (&tls.Dialer{NetDialer: d, Config: s.tlsConfig()}).DialContext(ctx, "tcp", s.addr())
		} else {
			c, err = d.DialContext(ctx, "tcp", s.addr())
		}
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		nc = c
		if ended {
			c.Close()
		}
		return c, nil
	}
	// Closing the connection is what interrupts a stuck set-up.
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		ended = true
		if nc != nil {
			nc.Close()
		}
	})
	defer stop()
	client, err := gomail.NewClient(s.Host, s.clientOptions(dial)...)
	if err != nil {
		return nil, fmt.Errorf("smtp: %s: %w", s.addr(), err)
	}
	c, err := client.DialToSMTPClientWithContext(ctx)
	if err != nil {
		mu.Lock()
		if nc != nil {
			nc.Close()
		}
		mu.Unlock()
		return nil, fmt.Errorf("smtp: setting up %s: %w", s.addr(), err)
	}
	return &Conn{s: s, c: c, nc: nc}, nil
}

// clientOptions are go-mail's settings for the URL. The dialer connects
// (with TLS for smtps://) and lets Dial close the connection.
func (s *SMTP) clientOptions(dial gomail.DialContextFunc) []gomail.Option {
	port, _ := strconv.Atoi(s.Port)
	hello := s.HelloName
	if hello == "" {
		hello = "localhost"
	}
	opts := []gomail.Option{
		gomail.WithPort(port), gomail.WithTimeout(sendTimeout), gomail.WithHELO(hello),
		gomail.WithDialContextFunc(dial), gomail.WithTLSConfig(s.tlsConfig()),
	}
	switch {
	case s.TLS:
		opts = append(opts, gomail.WithSSL())
	case s.RequireSTARTTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if s.Username != "" {
		opts = append(opts, gomail.WithUsername(s.Username), gomail.WithPassword(s.Password))
		switch s.Auth {
		case AuthPlain:
			opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthPlain))
		case AuthLogin:
			opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthLogin))
		default:
			opts = append(opts, gomail.WithOpportunisticSMTPAuth(gomail.SMTPAuthPlain, gomail.SMTPAuthLogin))
		}
	}
	return opts
}

// Send delivers one message (the full RFC 5322 text, as Render writes it)
// to one recipient. A message the server refuses leaves the connection
// usable for the next; any other failure ends it (see Usable).
func (c *Conn) Send(ctx context.Context, to string, msg []byte) error {
	if c.dead {
		return errors.New("smtp: the connection has ended")
	}
	ctx, cancel := context.WithTimeout(ctx, sendTimeout)
	defer cancel()
	if err := c.c.UpdateDeadline(sendTimeout); err != nil {
		c.end()
		return err
	}
	stop := context.AfterFunc(ctx, func() { c.nc.Close() })
	defer stop()
	err := c.send(to, msg)
	if err == nil {
		return nil
	}
	var reply *textproto.Error
	if errors.As(err, &reply) && ctx.Err() == nil {
		if rerr := c.c.Reset(); rerr != nil {
			c.end()
		}
	} else {
		c.end()
	}
	return err
}

func (c *Conn) send(to string, msg []byte) error {
	if err := c.c.Mail("<" + c.s.From + ">"); err != nil {
		return fmt.Errorf("smtp: MAIL FROM: %w", err)
	}
	if err := c.c.Rcpt("<" + to + ">"); err != nil {
		return fmt.Errorf("smtp: RCPT TO: %w", err)
	}
	w, err := c.c.Data()
	if err != nil {
		return fmt.Errorf("smtp: DATA: %w", err)
	}
	if _, err := w.Write(msg); err != nil {
		return fmt.Errorf("smtp: writing message: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("smtp: message refused: %w", err)
	}
	return nil
}

// Usable reports whether the connection can take another message.
func (c *Conn) Usable() bool { return !c.dead }

func (c *Conn) end() {
	c.dead = true
	c.nc.Close()
}

// Close says goodbye (QUIT) and closes the connection.
func (c *Conn) Close() {
	if !c.dead {
		_ = c.c.UpdateDeadline(quitTimeout)
		_ = c.c.Quit()
		c.end()
	}
}

// Send delivers one message over a connection of its own.
func (s *SMTP) Send(ctx context.Context, to string, msg []byte) error {
	c, err := s.Dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Send(ctx, to, msg)
}
