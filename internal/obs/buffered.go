package obs

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

// The buffered log output's limits: lines wait at most flushEvery, and a
// full buffer of bufferSize bytes is written at once.
const (
	flushEvery = 100 * time.Millisecond
	bufferSize = 64 << 10
)

// Buffered is log output that batches lines into few writes: one write(2)
// per line would cost a system call per request for the access log alone.
// Lines are written when the buffer fills, at most flushEvery after they
// were logged, at once after a line at WARN or above (through the handler
// of Handler), and on Flush and Close. It is safe for concurrent use.
type Buffered struct {
	mu     sync.Mutex
	w      *bufio.Writer
	closed bool
	stop   chan struct{}
	done   chan struct{}
}

// NewBuffered buffers the output to w and flushes it every flushEvery
// until Close.
func NewBuffered(w io.Writer) *Buffered { return newBuffered(w, flushEvery) }

func newBuffered(w io.Writer, every time.Duration) *Buffered {
	b := &Buffered{w: bufio.NewWriterSize(w, bufferSize), stop: make(chan struct{}), done: make(chan struct{})}
	go b.flushLoop(every)
	return b
}

func (b *Buffered) flushLoop(every time.Duration) {
	defer close(b.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = b.Flush()
		case <-b.stop:
			return
		}
	}
}

// Write buffers p (one line, as slog's handlers write them); after Close
// it writes through.
func (b *Buffered) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.w.Write(p)
	if err == nil && b.closed {
		err = b.w.Flush()
	}
	return n, err
}

// Flush writes what is buffered.
func (b *Buffered) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}

// Close flushes, stops the periodic flush, and leaves later lines written
// at once (a line logged while the process exits is not lost).
func (b *Buffered) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	err := b.w.Flush()
	b.mu.Unlock()
	close(b.stop)
	<-b.done
	return err
}

// Handler is h, writing to b, with b flushed after each line at WARN or
// above: warnings and errors do not wait.
func (b *Buffered) Handler(h slog.Handler) slog.Handler { return flushOnWarn{h, b} }

type flushOnWarn struct {
	slog.Handler
	b *Buffered
}

func (f flushOnWarn) Handle(ctx context.Context, r slog.Record) error {
	err := f.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := f.b.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (f flushOnWarn) WithAttrs(as []slog.Attr) slog.Handler {
	return flushOnWarn{f.Handler.WithAttrs(as), f.b}
}

func (f flushOnWarn) WithGroup(name string) slog.Handler {
	return flushOnWarn{f.Handler.WithGroup(name), f.b}
}

// Flush writes what the output of l holds, when l writes through a
// Buffered's Handler; otherwise it does nothing.
func Flush(l *slog.Logger) error {
	if l == nil {
		return nil
	}
	if f, ok := l.Handler().(flushOnWarn); ok {
		return f.b.Flush()
	}
	return nil
}
