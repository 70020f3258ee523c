// Package ratelimit is the per-key token bucket (one per instance): each
// request takes tokens, which come back at a steady rate up to a burst.
package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Limiter keeps one bucket per key.
type Limiter struct {
	rate  float64 // tokens per second
	burst float64
	now   func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	sweep   time.Time
	refused uint64 // guarded by mu
}

// Refused is how many requests the limiter has refused.
func (l *Limiter) Refused() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.refused
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New returns a limiter of rate requests per second with the given burst.
func New(rate, burst int, now func() time.Time) *Limiter {
	if burst < 1 {
		burst = 1
	}
	return &Limiter{rate: float64(rate), burst: float64(burst), now: now, buckets: map[string]*bucket{}}
}

// Allow takes one token for key; when none is left it returns the seconds to
// wait.
func (l *Limiter) Allow(key string) (bool, int) { return l.AllowN(key, 1) }

// AllowN takes n tokens for key at once, or none: when fewer are left it
// returns the seconds to wait until there are enough. n above the burst is
// taken as the burst (the whole bucket), so that a request is never refused
// for ever.
func (l *Limiter) AllowN(key string, n int) (bool, int) {
	need := math.Min(math.Max(float64(n), 1), l.burst)
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.sweep) > time.Minute {
		// Forget idle keys so the map does not grow without bound.
		for k, b := range l.buckets {
			if now.Sub(b.last) > time.Minute {
				delete(l.buckets, k)
			}
		}
		l.sweep = now
	}
	b, ok := l.buckets[key]
	if !ok {
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	b.tokens = math.Min(l.burst, b.tokens+now.Sub(b.last).Seconds()*l.rate)
	b.last = now
	if b.tokens >= need {
		b.tokens -= need
		return true, 0
	}
	l.refused++
	wait := int(math.Ceil((need - b.tokens) / l.rate))
	if wait < 1 {
		wait = 1
	}
	return false, wait
}
