package server

import (
	"fmt"

	"merchantpay/internal/banks"
	"merchantpay/internal/clock"
	"merchantpay/internal/rails"
)

// newRails builds the rails that RAILS names; only the sandbox is built in,
// and LoadConfig refuses any other value.
func newRails(cfg Config, dir *banks.Directory, c clock.Clock) (rails.Rails, error) {
	switch cfg.Rails {
	case "sandbox":
		return rails.NewSandbox(dir, c, rails.SandboxOptions{PayoutDelay: cfg.SandboxPayoutDelay})
	default:
		return nil, fmt.Errorf("RAILS=%q: unknown rails", cfg.Rails)
	}
}
