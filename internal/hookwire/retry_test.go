package hookwire

import (
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseScheduleDefault(t *testing.T) {
	got, err := ParseSchedule(DefaultSchedule)
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{
		5 * time.Second, 5 * time.Minute, 30 * time.Minute,
		2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestParseScheduleAccepts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []time.Duration
	}{
		{"1s", []time.Duration{time.Second}},
		{" 1s , 1m30s,2h ", []time.Duration{time.Second, 90 * time.Second, 2 * time.Hour}},
		{"100ms,1.5h", []time.Duration{100 * time.Millisecond, 90 * time.Minute}},
	} {
		got, err := ParseSchedule(tc.in)
		if err != nil {
			t.Errorf("ParseSchedule(%q): %v", tc.in, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ParseSchedule(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseScheduleRejects(t *testing.T) {
	for _, tc := range []struct{ in, msg string }{
		{"", "empty"},
		{" ", "empty"},
		{",", "empty"},
		{"5s,", "item 2 is empty"},
		{",5s", "item 1 is empty"},
		{"5s,,5m", "item 2 is empty"},
		{"5", "not a duration"},
		{"five seconds", "not a duration"},
		{"5s;5m", "not a duration"},
		{"0s", "greater than zero"},
		{"0", "greater than zero"},
		{"5s,-1m", "item 2 (\"-1m\") must be greater than zero"},
	} {
		got, err := ParseSchedule(tc.in)
		if err == nil {
			t.Errorf("ParseSchedule(%q) = %v, want an error", tc.in, got)
			continue
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("ParseSchedule(%q) error %q, want it to mention %q", tc.in, err, tc.msg)
		}
	}
}

func TestNextAttempt(t *testing.T) {
	schedule, err := ParseSchedule(DefaultSchedule)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := NextAttempt(schedule, 0, nil); d != 0 || !ok {
		t.Errorf("first attempt: got (%v, %v), want (0, true)", d, ok)
	}
	if d, ok := NextAttempt(schedule, -3, nil); d != 0 || !ok {
		t.Errorf("negative attempts: got (%v, %v), want (0, true)", d, ok)
	}
	for n := 1; n <= len(schedule); n++ {
		d, ok := NextAttempt(schedule, n, nil)
		if !ok || d != schedule[n-1] {
			t.Errorf("after %d attempts: got (%v, %v), want (%v, true)", n, d, ok, schedule[n-1])
		}
	}
	// 1 immediate attempt + 7 retries = 8 attempts, then the delivery fails.
	for _, n := range []int{len(schedule) + 1, len(schedule) + 2, 1000} {
		if d, ok := NextAttempt(schedule, n, nil); ok || d != 0 {
			t.Errorf("after %d attempts: got (%v, %v), want (0, false)", n, d, ok)
		}
	}
	if _, ok := NextAttempt(nil, 1, nil); ok {
		t.Error("empty schedule: a retry was scheduled")
	}
	if d, ok := NextAttempt(nil, 0, nil); !ok || d != 0 {
		t.Error("empty schedule: the first attempt was not due now")
	}
}

func TestNextAttemptJitter(t *testing.T) {
	schedule := []time.Duration{10 * time.Second, time.Minute}
	double := func(d time.Duration) time.Duration { return 2 * d }
	if d, ok := NextAttempt(schedule, 2, double); !ok || d != 2*time.Minute {
		t.Errorf("got (%v, %v), want (2m, true)", d, ok)
	}
	called := false
	spy := func(d time.Duration) time.Duration { called = true; return d }
	if d, _ := NextAttempt(schedule, 0, spy); d != 0 || called {
		t.Error("the first attempt was jittered")
	}
	if _, ok := NextAttempt(schedule, 3, spy); ok || called {
		t.Error("an exhausted schedule was jittered")
	}
	negative := func(time.Duration) time.Duration { return -time.Second }
	if d, ok := NextAttempt(schedule, 1, negative); !ok || d != 0 {
		t.Errorf("negative jitter: got (%v, %v), want (0, true)", d, ok)
	}
}

func TestNewJitterDeterministic(t *testing.T) {
	a := NewJitter(rand.New(rand.NewPCG(1, 2)))
	b := NewJitter(rand.New(rand.NewPCG(1, 2)))
	c := NewJitter(rand.New(rand.NewPCG(3, 4)))
	same, differ := true, false
	for range 50 {
		x, y, z := a(time.Hour), b(time.Hour), c(time.Hour)
		same = same && x == y
		differ = differ || x != z
	}
	if !same {
		t.Error("two jitters with the same seed gave different delays")
	}
	if !differ {
		t.Error("jitters with different seeds gave the same delays")
	}
}

func TestNewJitterBounds(t *testing.T) {
	for name, j := range map[string]func(time.Duration) time.Duration{
		"seeded": NewJitter(rand.New(rand.NewPCG(42, 42))),
		"global": NewJitter(nil),
	} {
		for _, base := range []time.Duration{time.Nanosecond, 5 * time.Second, 10 * time.Hour} {
			lo, hi := base-base/10, base+base/10
			minSeen, maxSeen := hi, lo
			for range 2000 {
				d := j(base)
				if d < lo || d > hi {
					t.Fatalf("%s: jitter(%v) = %v, outside [%v, %v]", name, base, d, lo, hi)
				}
				minSeen, maxSeen = min(minSeen, d), max(maxSeen, d)
			}
			// The spread really is about ±10%, not a constant.
			if base >= time.Second && (minSeen > base-base/20 || maxSeen < base+base/20) {
				t.Errorf("%s: jitter(%v) only spread over [%v, %v]", name, base, minSeen, maxSeen)
			}
		}
		for _, d := range []time.Duration{0, -time.Second} {
			if got := j(d); got != d {
				t.Errorf("%s: jitter(%v) = %v, want it unchanged", name, d, got)
			}
		}
	}
}

func TestNewJitterConcurrent(t *testing.T) {
	j := NewJitter(rand.New(rand.NewPCG(7, 7)))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				if d := j(time.Minute); d < 54*time.Second || d > 66*time.Second {
					t.Errorf("jitter(1m) = %v", d)
					return
				}
			}
		})
	}
	wg.Wait()
}
