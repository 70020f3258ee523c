package server

import (
	"fmt"

	"merchantpay/internal/banks"
	"merchantpay/internal/clock"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/binancepay"
	"merchantpay/internal/rails/flutterwave"
	"merchantpay/internal/rails/paystack"
)

// newLiveRails builds the adapters of the providers LIVE_RAILS names and
// assigns each its part of live mode: Paystack NG payouts, name enquiry and
// virtual accounts; Flutterwave GH payouts; Binance Pay crypto-pay. Errors
// name the provider, never a secret.
func newLiveRails(c RailsConfig, dir *banks.Directory, clk clock.Clock) (*rails.Live, error) {
	live := &rails.Live{
		Payouts:    map[string]rails.PayoutProvider{},
		References: map[string]func(string) string{},
		Receivers:  map[string]rails.WebhookReceiver{},
	}
	pc := func(base string) rails.ProviderConfig {
		return rails.ProviderConfig{BaseURL: base, Timeout: c.Timeout}
	}
	if c.Uses(rails.ProviderPaystack) {
		opts := []paystack.Option{paystack.WithBankDirectory(dir), paystack.WithClock(clk)}
		if c.PaystackDVABank != "" {
			opts = append(opts, paystack.WithPreferredBank(c.PaystackDVABank))
		}
		if c.PaystackEmailDomain != "" {
			opts = append(opts, paystack.WithCustomerEmailDomain(c.PaystackEmailDomain))
		}
		p, err := paystack.New(pc(c.PaystackBaseURL), c.PaystackSecretKey, opts...)
		if err != nil {
			return nil, fmt.Errorf("LIVE_RAILS: paystack: %w", err)
		}
		live.Payouts[banks.CountryNG] = p
		live.Names, live.Accounts = p, p
		live.References[rails.ProviderPaystack] = paystack.ProviderReference
		live.Receivers[rails.ProviderPaystack] = p
	}
	if c.Uses(rails.ProviderFlutterwave) {
		f, err := flutterwave.New(pc(c.FlutterwaveBaseURL), c.FlutterwaveSecretKey, c.FlutterwaveWebhookHash)
		if err != nil {
			return nil, fmt.Errorf("LIVE_RAILS: flutterwave: %w", err)
		}
		live.Payouts[banks.CountryGH] = f
		live.References[rails.ProviderFlutterwave] = flutterwave.ProviderReference
		live.Receivers[rails.ProviderFlutterwave] = f
	}
	if c.Uses(rails.ProviderBinancePay) {
		b, err := binancepay.New(pc(c.BinancePayBaseURL), c.BinancePayAPIKey, c.BinancePaySecretKey)
		if err != nil {
			return nil, fmt.Errorf("LIVE_RAILS: binancepay: %w", err)
		}
		live.Orders = b
		live.References[rails.ProviderBinancePay] = binancepay.TradeNo
		live.Receivers[rails.ProviderBinancePay] = b
	}
	return live, nil
}
