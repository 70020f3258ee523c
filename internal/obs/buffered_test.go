package obs

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// sink is log output that counts its writes.
type sink struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes++
	return s.buf.Write(p)
}

func (s *sink) lines() (lines, writes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.buf.String(), "\n"), s.writes
}

func bufferedLogger(b *Buffered) *slog.Logger {
	return slog.New(b.Handler(slog.NewJSONHandler(b, nil)))
}

// TestBufferedFlushesOnTime: info lines wait, then arrive together within
// the flush interval (some slack for a busy machine), in one write.
func TestBufferedFlushesOnTime(t *testing.T) {
	var out sink
	b := NewBuffered(&out)
	defer b.Close()
	log := bufferedLogger(b)
	start := time.Now()
	for i := 0; i < 3; i++ {
		log.Info("request", "i", i)
	}
	if n, _ := out.lines(); n != 0 && time.Since(start) < flushEvery/2 {
		t.Fatalf("%d info lines written at once; want them buffered", n)
	}
	for {
		if n, w := out.lines(); n == 3 {
			if w != 1 {
				t.Errorf("3 lines in %d writes, want 1", w)
			}
			break
		}
		if time.Since(start) > flushEvery+250*time.Millisecond {
			t.Fatalf("info lines not written %v after they were logged", time.Since(start))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestBufferedWarnAtOnce: a line at WARN or above is written at once, with
// the lines buffered before it, also through a logger With attributes.
func TestBufferedWarnAtOnce(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelWarn, slog.LevelError} {
		var out sink
		b := newBuffered(&out, time.Hour)
		log := bufferedLogger(b).With("request_id", "r-1")
		log.Info("first")
		if n, _ := out.lines(); n != 0 {
			t.Fatalf("%d lines written before the %s line", n, level)
		}
		log.Log(t.Context(), level, "second")
		if n, _ := out.lines(); n != 2 {
			t.Errorf("%d lines written after the %s line, want 2 at once", n, level)
		}
		b.Close()
	}
}

// TestBufferedClose: Flush of its logger and Close write what is buffered,
// and a line logged after Close is written at once.
func TestBufferedClose(t *testing.T) {
	var out sink
	b := newBuffered(&out, time.Hour)
	log := bufferedLogger(b)
	log.Info("flushed")
	if err := Flush(log.With("k", 1)); err != nil {
		t.Fatal(err)
	}
	if n, _ := out.lines(); n != 1 {
		t.Fatalf("%d lines after Flush, want 1", n)
	}
	if Flush(slog.Default()) != nil || Flush(nil) != nil {
		t.Fatal("Flush of an unbuffered logger")
	}
	out = sink{}
	log.Info("before")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if n, _ := out.lines(); n != 1 {
		t.Fatalf("%d lines after Close, want 1", n)
	}
	log.Info("after")
	if n, _ := out.lines(); n != 2 {
		t.Fatalf("%d lines after a line logged after Close, want 2", n)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestBufferedFull: a full buffer is written without waiting, and lines
// logged concurrently arrive whole (run with -race).
func TestBufferedFull(t *testing.T) {
	var out sink
	b := newBuffered(&out, time.Millisecond)
	log := bufferedLogger(b)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				log.Info("request", "pad", strings.Repeat("x", 100))
			}
		}()
	}
	wg.Wait()
	b.Close()
	n, _ := out.lines()
	if n != 1600 {
		t.Fatalf("%d lines, want 1600", n)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.buf.String()), "\n") {
		if !strings.HasPrefix(line, "{") || !strings.HasSuffix(line, "}") {
			t.Fatalf("torn line %q", line)
		}
	}

	var big sink
	b = newBuffered(&big, time.Hour)
	defer b.Close()
	line := strings.Repeat("x", 1000)
	for i := 0; i < bufferSize/1000+1; i++ {
		bufferedLogger(b).Info(line)
	}
	if n, _ := big.lines(); n == 0 {
		t.Fatal("nothing written with the buffer full")
	}
}
