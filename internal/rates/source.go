package rates

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/internal/pricing"
)

// PriceSource gives a pair's mid price at a time, around the mid the
// operator configured. It must not do I/O: quotes are priced inside
// database transactions.
type PriceSource interface {
	Mid(p pricing.Pair, configured decimal.Decimal, at time.Time) decimal.Decimal
}

// Price source names (PRICE_SOURCE).
const (
	SourceStatic  = "static"
	SourceSandbox = "sandbox"
)

// NewPriceSource returns the named source; window is the indicative refresh
// period, the sandbox market's step.
func NewPriceSource(name string, window time.Duration) (PriceSource, error) {
	switch name {
	case SourceStatic:
		return Static{}, nil
	case SourceSandbox:
		return NewSandboxMarket(window), nil
	}
	return nil, fmt.Errorf("unknown price source %q (want static or sandbox)", name)
}

// Static is exactly the configured mid (tests, and operators who set mids
// by hand with `server pairs set-mid`).
type Static struct{}

// Mid returns configured.
func (Static) Mid(_ pricing.Pair, configured decimal.Decimal, _ time.Time) decimal.Decimal {
	return configured
}

// SandboxMarket moves each pair's mid a little over time so that a refreshed
// quote visibly changes. The price is a pure function of (pair, window), where
// a window is one INDICATIVE_REFRESH period counted from the Unix epoch, so
// every instance shows the same price in the same window without sharing
// state, and the price is steady within a window (what refresh_in promises).
//
// The path is bounded: anchors drawn every anchorEvery windows in ±80% of the
// band, joined linearly, plus per-window noise of ±10% of the band, clamped to
// the band. One step therefore moves the mid by at most 0.3 band (0.6% for the
// default ±2%), and the mid never leaves configured × (1 ± band).
type SandboxMarket struct {
	window time.Duration
	// bandPPM is the largest offset from the configured mid, in millionths.
	bandPPM int64
}

const (
	sandboxBandPPM = 20_000 // ±2%
	anchorEvery    = 16
)

// NewSandboxMarket returns the sandbox market stepping once per window.
func NewSandboxMarket(window time.Duration) SandboxMarket {
	if window <= 0 {
		window = 20 * time.Second
	}
	return SandboxMarket{window: window, bandPPM: sandboxBandPPM}
}

// Mid returns configured × (1 + offset) for the window of at.
func (m SandboxMarket) Mid(p pricing.Pair, configured decimal.Decimal, at time.Time) decimal.Decimal {
	ppm := m.OffsetPPM(p, WindowIndex(at, m.window))
	return configured.Mul(decimal.New(1_000_000+ppm, -6))
}

// OffsetPPM is the offset of pair p's mid in window n, in millionths of the
// configured mid, always within ±bandPPM.
func (m SandboxMarket) OffsetPPM(p pricing.Pair, n int64) int64 {
	epoch := floorDiv(n, anchorEvery)
	pos := n - epoch*anchorEvery
	a0 := m.draw(p, "anchor", epoch, m.bandPPM*8/10)
	a1 := m.draw(p, "anchor", epoch+1, m.bandPPM*8/10)
	off := a0 + (a1-a0)*pos/anchorEvery + m.draw(p, "noise", n, m.bandPPM/10)
	return min(max(off, -m.bandPPM), m.bandPPM)
}

// draw is a deterministic pseudo-random integer in [-limit, limit].
func (m SandboxMarket) draw(p pricing.Pair, kind string, n, limit int64) int64 {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(n))
	h := sha256.New()
	h.Write([]byte(p.String() + "|" + kind + "|"))
	h.Write(buf[:])
	sum := h.Sum(nil)
	u := binary.BigEndian.Uint64(sum[:8])
	return int64(u%uint64(2*limit+1)) - limit
}

// WindowIndex is the number of whole windows of length d from the Unix epoch
// to at.
func WindowIndex(at time.Time, d time.Duration) int64 {
	return floorDiv(at.UnixMilli(), windowMS(d))
}

// WindowEnd is when the window holding at ends.
func WindowEnd(at time.Time, d time.Duration) time.Time {
	ms := windowMS(d)
	return time.UnixMilli((floorDiv(at.UnixMilli(), ms) + 1) * ms).UTC()
}

// windowMS is d in milliseconds, at least 1 (times have millisecond precision).
func windowMS(d time.Duration) int64 { return max(d.Milliseconds(), 1) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
