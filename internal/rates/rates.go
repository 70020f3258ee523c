// Package rates holds the operator's currency pairs, the indicative rates and
// the quotes: creating, refreshing and consuming them. The
// arithmetic is internal/pricing's; this package adds the configuration (in
// the database, shared by every instance), the price source, the clock and
// the one atomic consumption that swaps, withdrawals and deposits call.
//
// Configuration file versus CLI: at start-up each entry of the pairs file
// (PAIRS_CONFIG, or the embedded default) is inserted when its pair is not in
// the database, and applied again (mid, spread, fees, default_enabled) only
// when the entry itself changed since it was last applied; the database keeps
// the hash of the entry it applied. Changes made with the CLI (set-mid,
// enable, disable) live only in the database, so they survive restarts until
// the operator edits that pair's entry in the file: the later change wins.
// Pairs removed from the file stay in the database.
package rates

import (
	"time"

	"merchantpay/internal/clock"
	"merchantpay/internal/store"
)

// Options are the rate timings.
type Options struct {
	// QuoteTTL is a quote's lifetime (QUOTE_TTL).
	QuoteTTL time.Duration
	// IndicativeRefresh is the indicative rates' period (INDICATIVE_REFRESH).
	IndicativeRefresh time.Duration
	// SwapSettlementDelay is shown on swap quotes (SWAP_SETTLEMENT_DELAY).
	SwapSettlementDelay time.Duration
}

// Service runs the rate operations.
type Service struct {
	db    *store.DB
	clock clock.Clock
	src   PriceSource
	opt   Options
}

// New returns the rates service.
func New(db *store.DB, c clock.Clock, src PriceSource, opt Options) *Service {
	if opt.QuoteTTL <= 0 {
		opt.QuoteTTL = 90 * time.Second
	}
	if opt.IndicativeRefresh <= 0 {
		opt.IndicativeRefresh = 20 * time.Second
	}
	return &Service{db: db, clock: c, src: src, opt: opt}
}
