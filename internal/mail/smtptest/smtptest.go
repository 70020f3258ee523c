// Package smtptest is a minimal in-process SMTP server for tests: it accepts
// every message on 127.0.0.1 and keeps it for inspection. It speaks just
// enough of RFC 5321 for net/smtp's client (EHLO/HELO, MAIL, RCPT, DATA,
// RSET, NOOP, QUIT); no TLS, no AUTH.
package smtptest

import (
	"bufio"
	"bytes"
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

// Server is a running SMTP server.
type Server struct {
	Addr string
	ln   net.Listener

	mu   sync.Mutex
	msgs []Message
	// failNext makes the next n DATA commands fail with 451.
	failNext int
	wg       sync.WaitGroup
}

// New starts a server, closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("smtptest: listen: %v", err)
	}
	s := &Server{Addr: ln.Addr().String(), ln: ln}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.Close)
	return s
}

// URL is the SMTP_URL of the server.
func (s *Server) URL() string { return "smtp://" + s.Addr + "?from=notify@merchantpay.test" }

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

func (s *Server) session(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReader(c)
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
		switch strings.ToUpper(verb) {
		case "EHLO":
			reply("250-smtptest greets %s", arg)
			reply("250 8BITMIME")
		case "HELO":
			reply("250 smtptest")
		case "MAIL":
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
