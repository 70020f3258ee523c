package merchants

import (
	"context"
	"sync"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/apikey"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// UsageFlushInterval is how often FlushUsage runs (RunUsageFlusher): a
// key's last_used_at is written at most this often, never once per request.
const UsageFlushInterval = time.Minute

// usage holds, by key hash, when each key was last used since the last
// flush. Authentication touches it (a map write under a lock, no I/O).
type usage struct {
	mu   sync.Mutex
	used map[string]time.Time
	// flushed keeps, after a flush, what was written, so that Keys shows
	// the same time whether or not the write has landed.
	flushed map[string]time.Time
}

func (u *usage) touch(hash string, now time.Time) {
	u.mu.Lock()
	if now.After(u.used[hash]) {
		u.used[hash] = now
	}
	u.mu.Unlock()
}

// take returns what was used since the last take and starts afresh.
func (u *usage) take() map[string]time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	taken := u.used
	u.used = make(map[string]time.Time, len(taken))
	u.flushed = taken
	return taken
}

// latest is the later of the stored time and what this process knows.
func (u *usage) latest(hash string, stored *time.Time) *time.Time {
	u.mu.Lock()
	defer u.mu.Unlock()
	best := stored
	for _, m := range []map[string]time.Time{u.flushed, u.used} {
		if t, ok := m[hash]; ok && (best == nil || t.After(*best)) {
			t := t
			best = &t
		}
	}
	return best
}

// FlushUsage writes when each key used since the last flush was last used:
// one statement per key, a later time never overwritten by an earlier one
// (another instance may have written one). It returns how many keys it
// wrote.
func (s *Service) FlushUsage(ctx context.Context) (int, error) {
	taken := s.usage.take()
	if len(taken) == 0 {
		return 0, nil
	}
	ctx = tenant.System(ctx)
	n := 0
	err := s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		for hash, at := range taken {
			k, err := c.APIKey.Update().
				Where(apikey.Hash(hash), apikey.Or(apikey.LastUsedAtIsNil(), apikey.LastUsedAtLT(at))).
				SetLastUsedAt(at).Save(ctx)
			if err != nil {
				return err
			}
			n += k
		}
		return nil
	})
	if err != nil {
		// Put the times back, so the next flush writes them.
		for hash, at := range taken {
			s.usage.touch(hash, at)
		}
		return 0, store.Classify(err)
	}
	return n, nil
}

// RunUsageFlusher flushes every interval until ctx ends, then once more.
func (s *Service) RunUsageFlusher(ctx context.Context, interval time.Duration, logf func(err error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			// The last minute's uses, on the way out.
			if _, err := s.FlushUsage(context.WithoutCancel(ctx)); err != nil {
				logf(err)
			}
			return
		case <-t.C:
			if _, err := s.FlushUsage(ctx); err != nil {
				logf(err)
			}
		}
	}
}
