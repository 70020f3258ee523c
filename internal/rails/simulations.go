package rails

import (
	"context"

	"merchantpay/internal/apperr"
	"merchantpay/internal/tenant"
)

// Simulations says in which modes the sandbox's simulations are offered:
// funding a balance, an incoming bank transfer, completing a crypto-pay
// checkout. They make money appear, so they may exist only in a mode whose
// money moves on the sandbox rails. The operations that simulate check it
// themselves, so no transport can offer them where they do not belong.
//
// The nil Simulations offers them in no mode.
type Simulations func(mode string) bool

// SimulationsInEveryMode offers the simulations in test and live mode: the
// service runs on the sandbox rails alone.
func SimulationsInEveryMode(string) bool { return true }

// SimulationsInNoMode offers them in no mode.
func SimulationsInNoMode(string) bool { return false }

// Offered reports whether the simulations exist in mode.
func (s Simulations) Offered(mode string) bool { return s != nil && s(mode) }

// Check refuses, as NOT_FOUND (what an unknown route answers), a
// simulation in a mode where none are offered.
func (s Simulations) Check(mode string) error {
	if s.Offered(mode) {
		return nil
	}
	return apperr.New(apperr.NotFound, "no route for this simulation: the sandbox simulations do not exist in %s mode", mode)
}

// CheckTenant is Check for the mode of ctx's tenant; a context acting for
// no tenant is refused (tenant.ErrNoTenant).
func (s Simulations) CheckTenant(ctx context.Context) error {
	t, ok := tenant.From(ctx)
	if !ok {
		return tenant.ErrNoTenant
	}
	return s.Check(t.Mode)
}
