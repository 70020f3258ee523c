// Package smtptest is a minimal in-process SMTP server for tests: it accepts
// messages on 127.0.0.1 and keeps them for inspection, with what each
// connection saw. It speaks enough of RFC 5321 for an SMTP client (EHLO/HELO,
// MAIL, RCPT, DATA, RSET, NOOP, QUIT) and, when asked, STARTTLS (RFC 3207),
// TLS from the first byte, and AUTH PLAIN and LOGIN (RFC 4954), with a
// self-signed certificate made when the server starts.
package smtptest

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"
)

// Message is one received e-mail.
type Message struct {
	From string
	To   []string
	// Data is the message as sent, dot-unstuffed, CRLF line ends.
	Data []byte
}

// Parsed reads Data as an RFC 5322 message.
func (m Message) Parsed() (*mail.Message, error) { return mail.ReadMessage(bytes.NewReader(m.Data)) }

// TLSMode is how a server offers TLS.
type TLSMode int

const (
	// NoTLS offers none (no STARTTLS in the EHLO answer).
	NoTLS TLSMode = iota
	// StartTLS offers STARTTLS.
	StartTLS
	// Implicit expects a TLS handshake as the connection's first bytes
	// (smtps://).
	Implicit
)

// Options change what a server offers.
type Options struct {
	TLS TLSMode
	// Username and Password, when set, are the only credentials AUTH
	// accepts, and MAIL needs them first.
	Username, Password string
	// AuthMechanisms are offered in EHLO when Username is set: PLAIN and
	// LOGIN when empty.
	AuthMechanisms []string
}

// Session is what one connection saw.
type Session struct {
	// FirstByte is the first byte the client sent: 0x16 (a TLS handshake
	// record) for TLS from the start.
	FirstByte byte
	// TLS is whether the conversation ran over TLS (from the start or after
	// STARTTLS); StartTLS whether it got there with STARTTLS.
	TLS, StartTLS bool
	// Verbs are the commands in order (EHLO, STARTTLS, AUTH, MAIL, ...).
	Verbs []string
	// AuthMechanism, AuthUsername and AuthPassword are what the last AUTH
	// sent; Authenticated whether they were accepted.
	AuthMechanism, AuthUsername, AuthPassword string
	Authenticated                             bool
	// Messages is how many messages were accepted on this connection.
	Messages int
}

// Server is a running SMTP server.
type Server struct {
	Addr string
	ln   net.Listener
	opt  Options
	cert tls.Certificate
	// roots trust cert.
	roots *tls.Config

	mu       sync.Mutex
	msgs     []Message
	sessions []*Session
	// failNext makes the next n DATA commands fail with 451.
	failNext int
	wg       sync.WaitGroup
}

// New starts a server without TLS or AUTH, closed when the test ends.
func New(t testing.TB) *Server { return NewWith(t, Options{}) }

// NewWith starts a server offering what opt says, closed when the test ends.
func NewWith(t testing.TB, opt Options) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	if opt.Username != "" && len(opt.AuthMechanisms) == 0 {
		opt.AuthMechanisms = []string{"PLAIN", "LOGIN"}
	}
	s := &Server{Addr: ln.Addr().String(), ln: ln, opt: opt}
	if s.cert, s.roots, err = selfSigned(); err != nil {
		ln.Close()
		t.Fatalf("smtptest: certificate: %v", err)
	}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.Close)
	return s
}

// URL is the SMTP_URL of the server, without credentials: smtps:// for
// Implicit TLS, else smtp://.
func (s *Server) URL() string {
	scheme := "smtp"
	if s.opt.TLS == Implicit {
		scheme = "smtps"
	}
	return scheme + "://" + s.Addr + "?from=notify@merchantpay.test"
}

// ClientTLS is a client TLS configuration that trusts the server's
// certificate (made for 127.0.0.1).
func (s *Server) ClientTLS() *tls.Config { return s.roots.Clone() }

// FailNext makes the next n messages be refused with a temporary error.
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	s.failNext = n
	s.mu.Unlock()
}

// Messages returns the messages received so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Sessions returns what each connection so far saw, in the order they
// were accepted.
func (s *Server) Sessions() []Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Session, len(s.sessions))
	for i, ss := range s.sessions {
		out[i] = *ss
		out[i].Verbs = append([]string(nil), ss.Verbs...)
	}
	return out
}

// Close stops the server.
func (s *Server) Close() {
	s.ln.Close()
	s.wg.Wait()
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.session(c)
		}()
	}
}

// record changes the session's record under the lock.
func (s *Server) record(ss *Session, f func(*Session)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(ss)
}

func (s *Server) session(raw net.Conn) {
	var c net.Conn = raw
	defer func() { c.Close() }()
	_ = raw.SetDeadline(time.Now().Add(time.Minute))
	ss := &Session{}
	s.mu.Lock()
	s.sessions = append(s.sessions, ss)
	s.mu.Unlock()
	r := bufio.NewReader(raw)
	if s.opt.TLS == Implicit {
		// The client speaks first: a TLS handshake, before any greeting.
		first, err := r.Peek(1)
		if err != nil {
			return
		}
		s.record(ss, func(ss *Session) { ss.FirstByte = first[0] })
		tc := tls.Server(bufferedConn{raw, r}, &tls.Config{Certificates: []tls.Certificate{s.cert}})
		if tc.Handshake() != nil {
			return
		}
		c = tc
		r = bufio.NewReader(tc)
		s.record(ss, func(ss *Session) { ss.TLS = true })
	}
	w := bufio.NewWriter(c)
	reply := func(format string, args ...any) bool {
		fmt.Fprintf(w, format+"\r\n", args...)
		return w.Flush() == nil
	}
	if !reply("220 smtptest ESMTP ready") {
		return
	}
	var cur Message
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		s.record(ss, func(ss *Session) { ss.Verbs = append(ss.Verbs, verb) })
		switch verb {
		case "EHLO":
			reply("250-smtptest greets %s", arg)
			if s.opt.TLS == StartTLS && !ss.TLS {
				reply("250-STARTTLS")
			}
			if s.opt.Username != "" {
				reply("250-AUTH %s", strings.Join(s.opt.AuthMechanisms, " "))
			}
			reply("250 8BITMIME")
		case "HELO":
			reply("250 smtptest")
		case "STARTTLS":
			if s.opt.TLS != StartTLS || ss.TLS {
				reply("502 command not implemented")
				continue
			}
			if !reply("220 go ahead") {
				return
			}
			tc := tls.Server(bufferedConn{c, r}, &tls.Config{Certificates: []tls.Certificate{s.cert}})
			if tc.Handshake() != nil {
				return
			}
			c = tc
			r, w = bufio.NewReader(tc), bufio.NewWriter(tc)
			cur = Message{}
			s.record(ss, func(ss *Session) { ss.TLS, ss.StartTLS = true, true })
		case "AUTH":
			if !s.auth(ss, arg, r, reply) {
				return
			}
		case "MAIL":
			if s.opt.Username != "" && !ss.Authenticated {
				reply("530 5.7.0 authentication required")
				continue
			}
			cur = Message{From: addrOf(arg)}
			reply("250 OK")
		case "RCPT":
			cur.To = append(cur.To, addrOf(arg))
			reply("250 OK")
		case "DATA":
			if !reply("354 end data with <CR><LF>.<CR><LF>") {
				return
			}
			data, err := readData(r)
			if err != nil {
				return
			}
			cur.Data = data
			s.mu.Lock()
			fail := s.failNext > 0
			if fail {
				s.failNext--
			} else {
				s.msgs = append(s.msgs, cur)
				ss.Messages++
			}
			s.mu.Unlock()
			if fail {
				reply("451 try again later")
			} else {
				reply("250 OK queued")
			}
			cur = Message{}
		case "RSET":
			cur = Message{}
			reply("250 OK")
		case "NOOP":
			reply("250 OK")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 command not implemented")
		}
	}
}

// addrOf reads the address of "FROM:<a@b>" or "TO:<a@b> PARAM".
func addrOf(arg string) string {
	if i := strings.IndexByte(arg, '<'); i >= 0 {
		if j := strings.IndexByte(arg[i:], '>'); j >= 0 {
			return arg[i+1 : i+j]
		}
	}
	_, a, _ := strings.Cut(arg, ":")
	return strings.TrimSpace(a)
}

func readData(r *bufio.Reader) ([]byte, error) {
	var b bytes.Buffer
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if line == ".\r\n" || line == ".\n" {
			return b.Bytes(), nil
		}
		b.WriteString(strings.TrimPrefix(line, "."))
	}
}

// bufferedConn reads what its reader already buffered before the rest of
// the connection, so that a TLS handshake can follow a peek or a command.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }
