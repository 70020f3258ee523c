package rails

import (
	"context"
	"errors"
	"sort"
	"strings"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
)

// ModeLive is the mode whose money may move on real providers; test mode
// always runs on the sandbox.
const ModeLive = "live"

// ProviderSandbox names the built-in sandbox where a provider's name is
// expected (logs, metrics, GET /).
const ProviderSandbox = "sandbox"

// Live holds the real providers live mode runs on (LIVE_RAILS). A nil *Live
// runs live mode on the sandbox, as test mode.
type Live struct {
	// Payouts carry live payouts, by country (banks.CountryNG, CountryGH).
	Payouts map[string]PayoutProvider
	// References derive, by provider name, the reference a provider knows a
	// payout or an order by from ours (deterministic, so that the service
	// stores it before submitting).
	References map[string]func(ourRef string) string
	// Names resolves Nigerian account names in live mode.
	Names NameEnquirer
	// Accounts issues live NGN virtual accounts.
	Accounts AccountProvider
	// Orders takes live crypto-pay deposits.
	Orders CryptoOrderProvider
	// Receivers read each provider's webhooks, by provider name.
	Receivers map[string]WebhookReceiver
}

// Router picks the rails of each mode: the sandbox for test mode, and for
// live mode the configured providers (or the sandbox when none are).
type Router struct {
	Sandbox Rails
	Live    *Live
}

// OnSandbox reports whether mode's money moves on the sandbox rails.
func (r *Router) OnSandbox(mode string) bool { return mode != ModeLive || r.Live == nil }

// Providers lists the configured live providers' names, sorted; empty when
// live mode runs on the sandbox.
func (r *Router) Providers() []string {
	if r.Live == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, p := range r.Live.Payouts {
		seen[p.Provider()] = true
	}
	if r.Live.Accounts != nil {
		seen[r.Live.Accounts.Provider()] = true
	}
	if r.Live.Orders != nil {
		seen[r.Live.Orders.Provider()] = true
	}
	for name := range r.Live.Receivers {
		seen[name] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// NotConfigured is the error of a live operation whose provider LIVE_RAILS
// does not name: 422 RAIL_NOT_CONFIGURED, and nothing changes.
func NotConfigured(what string) error {
	return apperr.New(apperr.RailNotConfigured, "%s is not available in live mode: no provider for it is configured", what)
}

// Payouts returns the payout provider of a payout of country in mode.
func (r *Router) Payouts(mode, country string) (PayoutProvider, error) {
	if r.OnSandbox(mode) {
		return sandboxPayouts{r.Sandbox}, nil
	}
	if p, ok := r.Live.Payouts[country]; ok && p != nil {
		return p, nil
	}
	return nil, NotConfigured("a payout to " + countryName(country))
}

// CheckPayouts is Payouts' error alone: what a withdrawal checks before it
// is accepted.
func (r *Router) CheckPayouts(mode, country string) error {
	_, err := r.Payouts(mode, country)
	return err
}

// ProviderReference is the reference provider knows our reference ref by;
// ref itself when the provider derives none (the sandbox).
func (r *Router) ProviderReference(provider, ref string) string {
	if r.Live != nil {
		if f := r.Live.References[provider]; f != nil {
			return f(ref)
		}
	}
	return ref
}

// ErrInTransaction refuses a provider call made inside a database
// transaction: a slow provider must never hold one open.
var ErrInTransaction = errors.New("rails: a provider call inside a database transaction")

// ResolveAccount is the name enquiry of mode; tx is the caller's database
// transaction, which must be nil when a live provider is called.
func (r *Router) ResolveAccount(ctx context.Context, tx *ent.Tx, mode, bankCode, accountNumber string) (string, error) {
	if r.OnSandbox(mode) {
		return r.Sandbox.ResolveAccount(ctx, bankCode, accountNumber)
	}
	if r.Live.Names == nil {
		return "", NotConfigured("name enquiry")
	}
	if tx != nil {
		return "", ErrInTransaction
	}
	return r.Live.Names.ResolveAccount(ctx, bankCode, accountNumber)
}

// Accounts returns the live provider of virtual accounts in mode: nil with
// no error when mode issues its numbers from the sandbox.
func (r *Router) Accounts(mode string) (AccountProvider, error) {
	if r.OnSandbox(mode) {
		return nil, nil
	}
	if r.Live.Accounts == nil {
		return nil, NotConfigured("a virtual account")
	}
	return r.Live.Accounts, nil
}

// Orders returns the live provider of crypto-pay checkouts in mode: nil
// with no error when mode's checkouts are the sandbox's hosted page.
func (r *Router) Orders(mode string) (CryptoOrderProvider, error) {
	if r.OnSandbox(mode) {
		return nil, nil
	}
	if r.Live.Orders == nil {
		return nil, NotConfigured("a crypto-pay deposit")
	}
	return r.Live.Orders, nil
}

// Receiver returns the webhook reader of a configured provider.
func (r *Router) Receiver(provider string) (WebhookReceiver, bool) {
	if r.Live == nil {
		return nil, false
	}
	w, ok := r.Live.Receivers[provider]
	return w, ok && w != nil
}

// RefundsInflows tells whether provider can send an inflow back to its
// payer (its receiver is an InflowRefunder that says so).
func (r *Router) RefundsInflows(provider string) bool {
	w, ok := r.Receiver(provider)
	if !ok {
		return false
	}
	f, ok := w.(InflowRefunder)
	return ok && f.RefundsInflows()
}

// Simulations offers the sandbox's simulations in the modes whose money
// moves on the sandbox: test mode always, live mode while no provider is
// configured.
func (r *Router) Simulations() Simulations {
	return func(mode string) bool { return r.OnSandbox(mode) }
}

func countryName(country string) string {
	switch country {
	case banks.CountryNG:
		return "Nigeria"
	case banks.CountryGH:
		return "Ghana"
	}
	return strings.ToUpper(country)
}

// sandboxPayouts is the sandbox seen as a PayoutProvider.
type sandboxPayouts struct{ Rails }

func (sandboxPayouts) Provider() string { return ProviderSandbox }
