package server

import (
	"fmt"
	"net/http"

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

// newRouter puts test mode on the sandbox and live mode on the providers
// LIVE_RAILS names (live given by a test replaces them), or on the sandbox
// when it names none.
func newRouter(cfg Config, sandbox rails.Rails, dir *banks.Directory, c clock.Clock, live *rails.Live) (*rails.Router, error) {
	if live == nil && len(cfg.LiveRails.Live) > 0 {
		var err error
		if live, err = newLiveRails(cfg.LiveRails, dir, c); err != nil {
			return nil, err
		}
	}
	return &rails.Router{Sandbox: sandbox, Live: live}, nil
}

// railHooks is the webhook receiver of provider (404 when it is not
// configured).
func (a *App) railHooks(provider string) http.Handler { return a.RailNotices.Handler(provider) }
