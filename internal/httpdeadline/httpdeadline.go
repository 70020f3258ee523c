// Package httpdeadline holds the deadlines of a request's phases that
// net/http's Server cannot express by itself: a body that must keep a
// minimum pace, and a write deadline that a handler streaming a long answer
// extends chunk by chunk.
package httpdeadline

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"
)

// Grace is the time a body's first bytes may take once the service starts
// reading it, before the minimum rate applies.
const Grace = 2 * time.Second

// Body reads a request body under a read deadline on its connection that
// moves with what has arrived: once the service starts reading, the n-th
// byte must come within Grace + n/MinRate, and the whole body within
// Timeout. The clock starts at the first read, so that time the handler
// spends before reading (authenticating) is not charged to the client.
// A Body is used by one goroutine at a time, as a request body is.
type Body struct {
	rc          io.ReadCloser
	setDeadline func(time.Time) error
	now         func() time.Time
	timeout     time.Duration
	minRate     int
	declared    int64 // Content-Length; -1 when unknown

	start    time.Time // of the first read; zero before
	n        int64     // bytes read
	done     bool      // the end was read
	timedOut bool
}

// NewBody wraps rc, the body of a request whose connection's read deadline
// setDeadline sets (http.ResponseController.SetReadDeadline). declared is
// its Content-Length (-1 when unknown); minRate is in bytes per second (0:
// no minimum, only timeout).
func NewBody(rc io.ReadCloser, declared int64, timeout time.Duration, minRate int, setDeadline func(time.Time) error) *Body {
	return &Body{rc: rc, declared: declared, timeout: timeout, minRate: minRate, setDeadline: setDeadline, now: time.Now}
}

// Read reads from the body; a read past the deadline fails, and TimedOut
// says so from then on.
func (b *Body) Read(p []byte) (int, error) {
	if b.start.IsZero() {
		b.start = b.now()
		b.arm()
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	switch {
	case err == io.EOF:
		// Nothing more to read: net/http now watches the connection for
		// the client going away, and a deadline left on it would end the
		// request when it passed.
		b.done = true
		_ = b.setDeadline(time.Time{})
	case err != nil:
		if errors.Is(err, os.ErrDeadlineExceeded) {
			b.timedOut = true
		}
	case n > 0 && b.minRate > 0:
		b.arm()
	}
	return n, err
}

// Close closes the body.
func (b *Body) Close() error { return b.rc.Close() }

// Deadline is when the body, as far as it has arrived, must have arrived
// by (zero before the first read).
func (b *Body) Deadline() time.Time {
	if b.start.IsZero() {
		return time.Time{}
	}
	limit := b.timeout
	if b.minRate > 0 {
		if d := Grace + time.Duration(float64(b.n)/float64(b.minRate)*float64(time.Second)); d < limit {
			limit = d
		}
	}
	return b.start.Add(limit)
}

func (b *Body) arm() { _ = b.setDeadline(b.Deadline()) }

// Done reports whether the body was read to its end.
func (b *Body) Done() bool { return b.done }

// TimedOut reports whether a read of the body passed its deadline.
func (b *Body) TimedOut() bool { return b.timedOut }

// Drain reads and discards the rest of the body, under the same deadline,
// when at most limit bytes of it are declared to remain (or, of a body of
// unknown length, until limit bytes are read), and reports whether it was
// read to its end. Answering before the end of the body was read leaves
// the connection unusable: what follows on it is the rest of the body.
func (b *Body) Drain(limit int64) bool {
	if b.done || b.timedOut {
		return b.done
	}
	if b.declared >= 0 && b.declared-b.n > limit {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(b, limit+1))
	return b.done
}

// A WriteExtender gives the rest of an answer a new write deadline. The
// server's middleware puts one in every request's ResponseWriter chain.
type WriteExtender interface {
	ExtendWriteDeadline() error
}

// ErrNoExtender is ExtendWrite's error for a ResponseWriter that reaches
// no WriteExtender.
var ErrNoExtender = errors.New("httpdeadline: the response writer has no write deadline to extend")

// ExtendWrite gives the answer on w the write timeout again, from now. A
// handler that streams a long answer (an export) calls it before each
// chunk: a client that reads steadily is never cut off, one that stops
// reading is, one write timeout after its last chunk. Wrappers of w are
// followed through their Unwrap method, as http.ResponseController does.
func ExtendWrite(w http.ResponseWriter) error {
	for {
		switch t := w.(type) {
		case WriteExtender:
			return t.ExtendWriteDeadline()
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return ErrNoExtender
		}
	}
}
