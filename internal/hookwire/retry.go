package hookwire

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// DefaultSchedule is the retry schedule used when WEBHOOK_RETRY_SCHEDULE is
// not set: the delays before the second, third, ... attempt.
const DefaultSchedule = "5s,5m,30m,2h,5h,10h,10h"

// JitterFraction is how far NewJitter moves a delay either way (±10%).
const JitterFraction = 0.10

// ParseSchedule parses a comma-separated list of Go durations such as
// DefaultSchedule. Spaces around items are ignored. Empty items, an empty
// list and durations that are zero or negative are errors.
func ParseSchedule(s string) ([]time.Duration, error) {
	items := strings.Split(s, ",")
	out := make([]time.Duration, 0, len(items))
	for i, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("retry schedule %q: item %d is empty", s, i+1)
		}
		d, err := time.ParseDuration(item)
		if err != nil {
			return nil, fmt.Errorf("retry schedule %q: item %d (%q) is not a duration such as 5s, 5m or 2h", s, i+1, item)
		}
		if d <= 0 {
			return nil, fmt.Errorf("retry schedule %q: item %d (%q) must be greater than zero", s, i+1, item)
		}
		out = append(out, d)
	}
	return out, nil
}

// NextAttempt says when to make the next attempt of a delivery.
//
// attemptsMade counts the attempts already made, the first (immediate) one
// included: with 0 the first attempt is due now; with n ≥ 1 the delay is
// schedule[n-1], passed through jitter when jitter is not nil. ok is false
// once all len(schedule) retries have been made: the delivery has failed.
// A negative attemptsMade counts as 0, and a jittered delay never goes
// below zero.
func NextAttempt(schedule []time.Duration, attemptsMade int, jitter func(time.Duration) time.Duration) (delay time.Duration, ok bool) {
	if attemptsMade <= 0 {
		return 0, true
	}
	if attemptsMade > len(schedule) {
		return 0, false
	}
	delay = schedule[attemptsMade-1]
	if jitter != nil {
		delay = jitter(delay)
	}
	return max(delay, 0), true
}

// NewJitter returns a jitter for NextAttempt that moves a delay by a uniform
// random amount within ±JitterFraction of it. With a non-nil r (e.g.
// rand.New(rand.NewPCG(1, 2))) the sequence is deterministic; with nil it
// uses math/rand/v2's global source. The returned func is safe for
// concurrent use even though r itself is not.
func NewJitter(r *rand.Rand) func(time.Duration) time.Duration {
	var mu sync.Mutex
	float := rand.Float64
	if r != nil {
		float = func() float64 {
			mu.Lock()
			defer mu.Unlock()
			return r.Float64()
		}
	}
	return func(d time.Duration) time.Duration {
		if d <= 0 {
			return d
		}
		// u in [-1, 1): the result stays within [d-10%, d+10%).
		u := float()*2 - 1
		return d + time.Duration(u*JitterFraction*float64(d))
	}
}
