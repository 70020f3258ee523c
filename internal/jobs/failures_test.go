package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/lib/pq"

	"merchantpay/internal/apperr"
	"merchantpay/internal/jobs"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
)

// records keeps the log lines it is given.
type records struct {
	mu    sync.Mutex
	lines []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) count(level slog.Level) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.lines {
		if l.Level == level {
			n++
		}
	}
	return n
}

// A worker polling a database that takes no writes (or does not answer)
// says so once, at WARN, not at every poll; its other failures are logged
// each time at their level.
func TestFailuresQuietWhileUnavailable(t *testing.T) {
	var rec records
	f := &jobs.Failures{Log: slog.New(&rec)}
	readOnly := fmt.Errorf("payouts: claim: %w", &pq.Error{Code: "25006", Message: "cannot execute UPDATE in a read-only transaction"})
	down := &pq.Error{Code: "57P01", Message: "terminating connection due to administrator command"}
	for range 100 { // 100 polls
		f.Failed("payouts failed", readOnly)
		f.Failed("payouts failed", errors.Join(down, readOnly))
	}
	if n := rec.count(slog.LevelError); n != 0 {
		t.Errorf("%d ERROR lines for an unavailable database, want none", n)
	}
	if n := rec.count(slog.LevelWarn); n != 1 {
		t.Errorf("%d WARN lines for 200 failed polls within a minute, want 1", n)
	}

	other := errors.New("payouts: the rails answered nonsense")
	f.Failed("payouts failed", other)
	f.Failed("payouts failed", other)
	if n := rec.count(slog.LevelError); n != 2 {
		t.Errorf("%d ERROR lines for 2 other failures, want 2", n)
	}
	f.Warn("fan-out failed", other)
	if n := rec.count(slog.LevelWarn); n != 2 {
		t.Errorf("%d WARN lines after a routine failure, want 2", n)
	}
}

// The quiet WARN says the database is unavailable only when it is: a
// payment provider that answers 500 or times out is another service's
// unavailability, told by the error's kind, whatever its text says.
func TestFailuresNameWhatIsUnavailable(t *testing.T) {
	msgOf := func(err error) string {
		var rec records
		f := &jobs.Failures{Log: slog.New(&rec)}
		f.Warn("payouts failed", err)
		if len(rec.lines) != 1 || rec.lines[0].Level != slog.LevelWarn {
			t.Fatalf("%v: %d lines %+v, want one WARN", err, len(rec.lines), rec.lines)
		}
		return rec.lines[0].Message
	}
	provider := &apperr.Error{Kind: apperr.Unavailable, Message: "the payment provider did not give a clear answer",
		Cause: fmt.Errorf("paystack POST /transfer: HTTP 500 (the database is unavailable, says the body): %w", rails.ErrOutcomeUnknown)}
	if got := msgOf(provider); got != "payouts failed; retrying at every poll" {
		t.Errorf("provider unavailable: %q", got)
	}
	down := &pq.Error{Code: "57P01", Message: "terminating connection due to administrator command"}
	for _, err := range []error{down, store.Classify(down), fmt.Errorf("payouts: claim: %w", store.Classify(down))} {
		if got := msgOf(err); got != "payouts failed; the database is unavailable, retrying at every poll" {
			t.Errorf("database unavailable (%v): %q", err, got)
		}
	}
}
