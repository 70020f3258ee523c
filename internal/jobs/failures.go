package jobs

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/store"
)

// QuietPeriod is how often a worker whose database is unavailable says so.
const QuietPeriod = time.Minute

// Failures logs a background worker's failed passes. A pass that failed
// because the database is unavailable (down, restarting, or taking no
// writes while a failover is under way), or a service it calls is (a
// payment provider that times out or answers 5xx), fails again at every
// poll until it is back, which an ERROR at every poll would only bury: it
// is logged at WARN, at most once per QuietPeriod, with the number of
// failures since the last line, saying the database is unavailable only
// when it is. Any other failure is logged every time.
// The zero Failures logs to slog.Default().
type Failures struct {
	Log *slog.Logger

	mu     sync.Mutex
	last   time.Time // of the last WARN line
	unsaid int       // unavailable failures since then
}

// Failed logs the failure err of a pass, an ERROR unless the database is
// unavailable; msg says what failed.
func (f *Failures) Failed(msg string, err error) { f.report(slog.LevelError, msg, err) }

// Warn is Failed for a pass whose other failures are WARNs (they are
// retried at the next poll and lose nothing).
func (f *Failures) Warn(msg string, err error) { f.report(slog.LevelWarn, msg, err) }

func (f *Failures) report(level slog.Level, msg string, err error) {
	log := f.Log
	if log == nil {
		log = slog.Default()
	}
	if !apperr.Is(store.Classify(err), apperr.Unavailable) {
		log.Log(context.Background(), level, msg, "err", err)
		return
	}
	f.mu.Lock()
	now := time.Now()
	if !f.last.IsZero() && now.Sub(f.last) < QuietPeriod {
		f.unsaid++
		f.mu.Unlock()
		return
	}
	since := f.unsaid
	f.last, f.unsaid = now, 0
	f.mu.Unlock()
	why := "; retrying at every poll"
	if store.DatabaseUnavailable(err) {
		why = "; the database is unavailable, retrying at every poll"
	}
	log.Warn(msg+why, "err", err, "failures_since_last_log", since)
}
