package httpdeadline

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// chunks is a body arriving in pieces; a nil piece is a read that timed out.
type chunks struct{ pieces []*string }

func (c *chunks) Read(p []byte) (int, error) {
	if len(c.pieces) == 0 {
		return 0, io.EOF
	}
	piece := c.pieces[0]
	c.pieces = c.pieces[1:]
	if piece == nil {
		return 0, os.ErrDeadlineExceeded
	}
	return copy(p, *piece), nil
}

func (c *chunks) Close() error { return nil }

func str(s string) *string { return &s }

// The deadline starts at the first read, moves by 1/rate a byte, never
// past the body timeout, and is cleared at the end of the body.
func TestBodyDeadlineFollowsThePace(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var set []time.Time
	src := &chunks{pieces: []*string{str(strings.Repeat("a", 1024)), str(strings.Repeat("b", 100*1024)), str("c")}}
	b := NewBody(src, -1, 30*time.Second, 1024, func(d time.Time) error { set = append(set, d); return nil })
	b.now = func() time.Time { return t0 }
	if !b.Deadline().IsZero() {
		t.Fatal("a deadline before the first read")
	}
	buf := make([]byte, 200*1024)
	for !b.Done() {
		if _, err := b.Read(buf); err != nil && err != io.EOF {
			t.Fatal(err)
		}
	}
	want := []time.Time{
		t0.Add(Grace),               // the first read
		t0.Add(Grace + time.Second), // 1 KiB read
		t0.Add(30 * time.Second),    // 101 KiB: capped at the body timeout
		t0.Add(30 * time.Second),    // one byte more
		{},                          // the end: cleared
	}
	if len(set) != len(want) {
		t.Fatalf("deadlines %v, want %v", set, want)
	}
	for i := range want {
		if !set[i].Equal(want[i]) {
			t.Errorf("deadline %d: %v, want %v", i, set[i], want[i])
		}
	}
}

// A read that times out is remembered; Drain neither reads a body past
// its limit nor one that timed out.
func TestBodyTimeoutAndDrain(t *testing.T) {
	noop := func(time.Time) error { return nil }
	b := NewBody(&chunks{pieces: []*string{str("{"), nil}}, 100, time.Minute, 0, noop)
	if b.Drain(1 << 10) {
		t.Fatal("drained a body that timed out")
	}
	if !b.TimedOut() || b.Done() {
		t.Fatalf("timed out %v, done %v", b.TimedOut(), b.Done())
	}
	big := NewBody(&chunks{pieces: []*string{str("x")}}, 1<<20, time.Minute, 0, noop)
	if big.Drain(1<<10) || big.n != 0 {
		t.Fatalf("read %d bytes of a body declared over the limit", big.n)
	}
	small := NewBody(&chunks{pieces: []*string{str("xy"), str("z")}}, 3, time.Minute, 0, noop)
	if !small.Drain(1<<10) || small.n != 3 {
		t.Fatalf("drain: done %v after %d bytes", small.Done(), small.n)
	}
}

type extender struct {
	http.ResponseWriter
	calls int
}

func (e *extender) ExtendWriteDeadline() error { e.calls++; return nil }

type wrapper struct{ http.ResponseWriter }

func (w wrapper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// ExtendWrite finds the extender through wrappers, and says when there is
// none.
func TestExtendWrite(t *testing.T) {
	x := &extender{ResponseWriter: httptest.NewRecorder()}
	if err := ExtendWrite(wrapper{wrapper{x}}); err != nil || x.calls != 1 {
		t.Fatalf("err %v, calls %d", err, x.calls)
	}
	if err := ExtendWrite(httptest.NewRecorder()); !errors.Is(err, ErrNoExtender) {
		t.Fatalf("without an extender: %v", err)
	}
}
