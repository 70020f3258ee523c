package server

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"merchantpay/internal/rails"
)

// RailsConfig is what live mode runs on (LIVE_RAILS and the providers'
// settings). Its secrets are never logged: String leaves them out.
type RailsConfig struct {
	// Live lists the providers live mode runs on, sorted; empty means the
	// built-in sandbox (LIVE_RAILS=sandbox, the default).
	Live []string

	PaystackSecretKey string
	PaystackBaseURL   string
	// PaystackDVABank is the dedicated accounts' bank slug
	// (PAYSTACK_DVA_BANK; empty: the adapter's default, wema-bank), and
	// PaystackEmailDomain the domain of the customers' derived addresses
	// (PAYSTACK_CUSTOMER_EMAIL_DOMAIN; empty: the adapter's default).
	PaystackDVABank     string
	PaystackEmailDomain string

	FlutterwaveSecretKey   string
	FlutterwaveWebhookHash string
	FlutterwaveBaseURL     string

	BinancePayAPIKey    string
	BinancePaySecretKey string
	BinancePayBaseURL   string

	// Timeout bounds each provider call (RAILS_TIMEOUT, default 30s).
	Timeout time.Duration
	// ReconcileAfter is how long a live payout stays pending before the
	// payout worker looks it up at the provider (RAILS_RECONCILE_AFTER,
	// default 10m); also the interval between later look-ups.
	ReconcileAfter time.Duration
}

// Uses reports whether live mode runs on provider.
func (c RailsConfig) Uses(provider string) bool { return slices.Contains(c.Live, provider) }

// LiveName is what the start-up log and GET / say live mode runs on.
func (c RailsConfig) LiveName() string {
	if len(c.Live) == 0 {
		return rails.ProviderSandbox
	}
	return strings.Join(c.Live, ",")
}

// String leaves the secrets out, so that a configuration printed by
// mistake shows none.
func (c RailsConfig) String() string {
	return fmt.Sprintf("live rails %s (paystack %s, flutterwave %s, binancepay %s; timeout %s, reconcile after %s)",
		c.LiveName(), c.PaystackBaseURL, c.FlutterwaveBaseURL, c.BinancePayBaseURL, c.Timeout, c.ReconcileAfter)
}

// GoString is String, for %#v.
func (c RailsConfig) GoString() string { return c.String() }

// Default base URLs of the providers' production APIs.
const (
	DefaultPaystackBaseURL    = "https://api.paystack.co"
	DefaultFlutterwaveBaseURL = "https://api.flutterwave.com"
	DefaultBinancePayBaseURL  = "https://bpay.binanceapi.com"
)

var knownProviders = []string{rails.ProviderPaystack, rails.ProviderFlutterwave, rails.ProviderBinancePay}

// loadRailsConfig reads LIVE_RAILS and the providers' settings, adding what
// is wrong with them to bad. It names variables, never their secret values.
// RAILS_TIMEOUT and RAILS_RECONCILE_AFTER are LoadConfig's to read, with
// its other durations.
func loadRailsConfig(getenv func(string) string, bad []string) (RailsConfig, []string) {
	c := RailsConfig{
		PaystackSecretKey:      getenv("PAYSTACK_SECRET_KEY"),
		PaystackDVABank:        getenv("PAYSTACK_DVA_BANK"),
		PaystackEmailDomain:    getenv("PAYSTACK_CUSTOMER_EMAIL_DOMAIN"),
		FlutterwaveSecretKey:   getenv("FLUTTERWAVE_SECRET_KEY"),
		FlutterwaveWebhookHash: getenv("FLUTTERWAVE_WEBHOOK_HASH"),
		BinancePayAPIKey:       getenv("BINANCEPAY_API_KEY"),
		BinancePaySecretKey:    getenv("BINANCEPAY_SECRET_KEY"),
	}
	baseURL := func(name, def string) string {
		v := getenv(name)
		if v == "" {
			return def
		}
		if err := checkBaseURL(v); err != nil {
			bad = append(bad, fmt.Sprintf("%s=%q %v", name, v, err))
		}
		return strings.TrimRight(v, "/")
	}
	c.PaystackBaseURL = baseURL("PAYSTACK_BASE_URL", DefaultPaystackBaseURL)
	c.FlutterwaveBaseURL = baseURL("FLUTTERWAVE_BASE_URL", DefaultFlutterwaveBaseURL)
	c.BinancePayBaseURL = baseURL("BINANCEPAY_BASE_URL", DefaultBinancePayBaseURL)

	v := strings.TrimSpace(getenv("LIVE_RAILS"))
	if v == "" || v == rails.ProviderSandbox {
		return c, bad
	}
	for _, name := range strings.Split(v, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		switch {
		case name == "":
		case !slices.Contains(knownProviders, name):
			bad = append(bad, fmt.Sprintf("LIVE_RAILS=%q: %q is not a provider (sandbox alone, or a comma list of %s)",
				v, name, strings.Join(knownProviders, ", ")))
		case !slices.Contains(c.Live, name):
			c.Live = append(c.Live, name)
		}
	}
	if len(c.Live) == 0 {
		bad = append(bad, fmt.Sprintf("LIVE_RAILS=%q names no provider", v))
	}
	slices.Sort(c.Live)
	need := func(provider string, vars ...[2]string) {
		if !c.Uses(provider) {
			return
		}
		for _, nv := range vars {
			if nv[1] == "" {
				bad = append(bad, fmt.Sprintf("LIVE_RAILS names %s, which needs %s", provider, nv[0]))
			}
		}
	}
	need(rails.ProviderPaystack, [2]string{"PAYSTACK_SECRET_KEY", c.PaystackSecretKey})
	need(rails.ProviderFlutterwave, [2]string{"FLUTTERWAVE_SECRET_KEY", c.FlutterwaveSecretKey},
		[2]string{"FLUTTERWAVE_WEBHOOK_HASH", c.FlutterwaveWebhookHash})
	need(rails.ProviderBinancePay, [2]string{"BINANCEPAY_API_KEY", c.BinancePayAPIKey},
		[2]string{"BINANCEPAY_SECRET_KEY", c.BinancePaySecretKey})
	return c, bad
}

// checkBaseURL accepts scheme and host only: http or https, a host, an
// optional port, nothing after.
func checkBaseURL(v string) error {
	u, err := url.Parse(strings.TrimRight(v, "/"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("is not a base URL: scheme and host only, e.g. https://api.example.com")
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("must be scheme and host only (the adapter adds the provider's paths), without path, query or credentials")
	}
	return nil
}
