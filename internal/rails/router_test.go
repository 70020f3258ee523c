package rails_test

import (
	"context"
	"testing"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/clock"
	"merchantpay/internal/rails"
)

type ngPayouts struct{ rails.PayoutProvider }

func (ngPayouts) Provider() string { return rails.ProviderPaystack }

func TestRouterPicksEachModesRails(t *testing.T) {
	dir, err := banks.Load()
	if err != nil {
		t.Fatal(err)
	}
	sb, err := rails.NewSandbox(dir, clock.Real{}, rails.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	onSandbox := &rails.Router{Sandbox: sb}
	for _, mode := range []string{"test", "live"} {
		p, err := onSandbox.Payouts(mode, banks.CountryGH)
		if err != nil || p.Provider() != rails.ProviderSandbox || !onSandbox.Simulations().Offered(mode) {
			t.Errorf("%s on the sandbox: %v %v", mode, p, err)
		}
	}

	r := &rails.Router{Sandbox: sb, Live: &rails.Live{Payouts: map[string]rails.PayoutProvider{banks.CountryNG: ngPayouts{}},
		References: map[string]func(string) string{rails.ProviderPaystack: func(s string) string { return "ps-" + s }}}}
	if p, err := r.Payouts("test", banks.CountryNG); err != nil || p.Provider() != rails.ProviderSandbox {
		t.Errorf("test mode must stay on the sandbox: %v %v", p, err)
	}
	if p, err := r.Payouts("live", banks.CountryNG); err != nil || p.Provider() != rails.ProviderPaystack {
		t.Errorf("live NG: %v %v", p, err)
	}
	for name, err := range map[string]error{
		"live GH payout": r.CheckPayouts("live", banks.CountryGH),
		"live account":   func() error { _, err := r.Accounts("live"); return err }(),
		"live order":     func() error { _, err := r.Orders("live"); return err }(),
		"live enquiry": func() error {
			_, err := r.ResolveAccount(context.Background(), nil, "live", "058", "0123456789")
			return err
		}(),
	} {
		if apperr.KindOf(err) != apperr.RailNotConfigured || apperr.RailNotConfigured.Status() != 422 {
			t.Errorf("%s: %v, want 422 RAIL_NOT_CONFIGURED", name, err)
		}
	}
	if r.Simulations().Offered("live") || !r.Simulations().Offered("test") {
		t.Error("with a provider, the simulations are for test mode only")
	}
	if got := r.ProviderReference(rails.ProviderPaystack, "WTH-1"); got != "ps-WTH-1" {
		t.Errorf("provider reference: %s", got)
	}
	if got := r.Providers(); len(got) != 1 || got[0] != rails.ProviderPaystack {
		t.Errorf("providers: %v", got)
	}
}

type plainReceiver struct{ rails.WebhookReceiver }

type refundingReceiver struct{ rails.WebhookReceiver }

func (refundingReceiver) RefundsInflows() bool { return true }

// A provider can send inflows back only when its receiver says so.
func TestRouterRefundsInflows(t *testing.T) {
	r := &rails.Router{Live: &rails.Live{Receivers: map[string]rails.WebhookReceiver{
		rails.ProviderPaystack: plainReceiver{}, "refunder": refundingReceiver{}}}}
	if r.RefundsInflows(rails.ProviderPaystack) || r.RefundsInflows("unknown") {
		t.Error("a receiver without the capability refunds inflows")
	}
	if !r.RefundsInflows("refunder") {
		t.Error("a receiver that says it refunds is not believed")
	}
}
