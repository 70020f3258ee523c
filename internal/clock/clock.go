// Package clock injects time so that tests control expiry.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock, in UTC with millisecond precision.
type Real struct{}

// Now returns the current time in UTC truncated to milliseconds.
func (Real) Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// Fake is a clock that tests move by hand.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a fake clock at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t.UTC().Truncate(time.Millisecond)} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the fake time forward by d.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d).Truncate(time.Millisecond)
	f.mu.Unlock()
}

// Set moves the fake time to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.now = t.UTC().Truncate(time.Millisecond)
	f.mu.Unlock()
}
