package ratelimit

import (
	"testing"
	"time"
)

func TestAllowN(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := New(10, 20, func() time.Time { return now })
	if ok, _ := l.AllowN("k", 15); !ok {
		t.Fatal("15 of a full bucket of 20 refused")
	}
	if ok, wait := l.AllowN("k", 6); ok || wait != 1 {
		t.Fatalf("6 of the 5 left: ok=%v wait=%d, want refused with 1 s", ok, wait)
	}
	if ok, _ := l.Allow("k"); !ok {
		t.Fatal("a refused AllowN took tokens: 1 of the 5 left refused")
	}
	now = now.Add(2 * time.Second) // 4 left + 20 back, capped at the burst
	if ok, _ := l.AllowN("k", 500); !ok {
		t.Fatal("more than the burst from a full bucket refused")
	}
	if ok, wait := l.Allow("k"); ok || wait != 1 {
		t.Fatalf("after draining the bucket: ok=%v wait=%d", ok, wait)
	}
	if ok, _ := l.AllowN("other", 20); !ok {
		t.Fatal("keys share a bucket")
	}
}
