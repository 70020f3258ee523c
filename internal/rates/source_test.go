package rates

import (
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/internal/money"
	"merchantpay/internal/pricing"
)

func TestStaticIsTheConfiguredMid(t *testing.T) {
	p := pricing.Pair{Asset: money.USDT, Fiat: money.NGN}
	mid := decimal.RequireFromString("1650.5")
	for _, at := range []time.Time{time.Unix(0, 0), time.Now(), time.Now().Add(100 * time.Hour)} {
		if got := (Static{}).Mid(p, mid, at); !got.Equal(mid) {
			t.Fatalf("Static.Mid at %s = %s, want %s", at, got, mid)
		}
	}
}

func TestSandboxMarketIsBoundedDeterministicAndMoves(t *testing.T) {
	const window = 20 * time.Second
	m1, m2 := NewSandboxMarket(window), NewSandboxMarket(window)
	maxStep := int64(sandboxBandPPM * 3 / 10)
	for _, p := range []pricing.Pair{{Asset: money.USDT, Fiat: money.NGN}, {Asset: money.BTC, Fiat: money.GHS}, {Asset: money.USD, Fiat: money.NGN}} {
		moved, up, down := 0, false, false
		prev := m1.OffsetPPM(p, -501)
		for n := int64(-500); n < 3000; n++ {
			off := m1.OffsetPPM(p, n)
			if off < -sandboxBandPPM || off > sandboxBandPPM {
				t.Fatalf("%s window %d: offset %d ppm outside ±%d", p, n, off, sandboxBandPPM)
			}
			if other := m2.OffsetPPM(p, n); other != off {
				t.Fatalf("%s window %d: two instances disagree (%d vs %d)", p, n, off, other)
			}
			if d := off - prev; d > maxStep || d < -maxStep {
				t.Fatalf("%s window %d: step of %d ppm, more than %d", p, n, d, maxStep)
			}
			if off != prev {
				moved++
			}
			up, down = up || off > 0, down || off < 0
			prev = off
		}
		if moved < 3400 || !up || !down {
			t.Errorf("%s: moved in %d of 3500 windows (up %t, down %t)", p, moved, up, down)
		}
	}
}

func TestSandboxMarketSteadyWithinAWindow(t *testing.T) {
	const window = 20 * time.Second
	m := NewSandboxMarket(window)
	p := pricing.Pair{Asset: money.USDT, Fiat: money.NGN}
	mid := decimal.New(1600, 0)
	start := time.UnixMilli(WindowIndex(time.Now(), window) * window.Milliseconds())
	first := m.Mid(p, mid, start)
	for _, d := range []time.Duration{time.Millisecond, 5 * time.Second, window - time.Millisecond} {
		if got := m.Mid(p, mid, start.Add(d)); !got.Equal(first) {
			t.Fatalf("mid moved within a window: %s at +%s vs %s", got, d, first)
		}
	}
	lo, hi := mid.Mul(decimal.RequireFromString("0.98")), mid.Mul(decimal.RequireFromString("1.02"))
	changed := false
	for i := 1; i <= 5; i++ {
		next := m.Mid(p, mid, start.Add(time.Duration(i)*window))
		if next.LessThan(lo) || next.GreaterThan(hi) {
			t.Fatalf("mid %s outside ±2%% of %s", next, mid)
		}
		changed = changed || !next.Equal(first)
	}
	if !changed {
		t.Fatal("mid did not change over five windows")
	}
}

func TestWindows(t *testing.T) {
	w := 20 * time.Second
	at := time.UnixMilli(1_000_000_123)
	if got := WindowIndex(at, w); got != 50_000 {
		t.Errorf("WindowIndex = %d", got)
	}
	if got := WindowEnd(at, w); !got.Equal(time.UnixMilli(1_000_020_000)) {
		t.Errorf("WindowEnd = %s", got)
	}
	if got := WindowIndex(time.UnixMilli(-1), w); got != -1 {
		t.Errorf("WindowIndex before the epoch = %d, want -1", got)
	}
	if got := secondsUntil(at, WindowEnd(at, w)); got != 20 {
		t.Errorf("secondsUntil = %d, want 20 (rounded up)", got)
	}
	if got := secondsUntil(at, at.Add(-time.Second)); got != 0 {
		t.Errorf("secondsUntil in the past = %d", got)
	}
}

func TestNewPriceSource(t *testing.T) {
	if s, err := NewPriceSource(SourceStatic, time.Second); err != nil || s != (Static{}) {
		t.Errorf("static: %v, %v", s, err)
	}
	if _, err := NewPriceSource(SourceSandbox, time.Second); err != nil {
		t.Errorf("sandbox: %v", err)
	}
	if _, err := NewPriceSource("live", time.Second); err == nil {
		t.Error("unknown source accepted")
	}
}
