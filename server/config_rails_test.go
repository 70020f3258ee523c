package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"merchantpay/server"
)

func loadRails(vars map[string]string) (server.Config, error) {
	return server.LoadConfig(func(k string) string { return vars[k] })
}

func TestLiveRailsConfig(t *testing.T) {
	c, err := loadRails(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := c.LiveRails
	if len(r.Live) != 0 || r.LiveName() != "sandbox" || r.Timeout != 30*time.Second || r.ReconcileAfter != 10*time.Minute ||
		r.PaystackBaseURL != "https://api.paystack.co" || r.FlutterwaveBaseURL != "https://api.flutterwave.com" ||
		r.BinancePayBaseURL != "https://bpay.binanceapi.com" {
		t.Fatalf("defaults: %+v", r)
	}
	if !c.Simulations().Offered("live") {
		t.Error("live mode on the sandbox must keep the simulations")
	}

	c, err = loadRails(map[string]string{"LIVE_RAILS": " Paystack, binancepay ", "PAYSTACK_SECRET_KEY": "sk_live_secret1",
		"BINANCEPAY_API_KEY": "bnb-key", "BINANCEPAY_SECRET_KEY": "bnb-secret2", "PAYSTACK_BASE_URL": "http://127.0.0.1:9000/",
		"RAILS_TIMEOUT": "5s", "RAILS_RECONCILE_AFTER": "2m"})
	if err != nil {
		t.Fatal(err)
	}
	r = c.LiveRails
	if r.LiveName() != "binancepay,paystack" || r.PaystackBaseURL != "http://127.0.0.1:9000" || r.Timeout != 5*time.Second || r.ReconcileAfter != 2*time.Minute {
		t.Fatalf("providers: %+v", r)
	}
	if c.Simulations().Offered("live") || !c.Simulations().Offered("test") {
		t.Error("with providers, the simulations are for test mode only")
	}
	for _, shown := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(shown, "sk_live_secret1") || strings.Contains(shown, "bnb-secret2") {
			t.Errorf("a printed configuration shows a secret: %s", shown)
		}
	}

	for _, tc := range []struct {
		vars map[string]string
		want []string
	}{
		{map[string]string{"LIVE_RAILS": "paystack,stripe", "PAYSTACK_SECRET_KEY": "k"}, []string{`"stripe" is not a provider`}},
		{map[string]string{"LIVE_RAILS": "flutterwave"}, []string{"FLUTTERWAVE_SECRET_KEY", "FLUTTERWAVE_WEBHOOK_HASH"}},
		{map[string]string{"LIVE_RAILS": "paystack,binancepay", "BINANCEPAY_API_KEY": "k"}, []string{"PAYSTACK_SECRET_KEY", "BINANCEPAY_SECRET_KEY"}},
		{map[string]string{"PAYSTACK_BASE_URL": "https://api.paystack.co/v1"}, []string{"PAYSTACK_BASE_URL"}},
		{map[string]string{"BINANCEPAY_BASE_URL": "ftp://x"}, []string{"BINANCEPAY_BASE_URL"}},
		{map[string]string{"RAILS_TIMEOUT": "soon"}, []string{"RAILS_TIMEOUT"}},
		{map[string]string{"LIVE_RAILS": ","}, []string{"names no provider"}},
	} {
		_, err := loadRails(tc.vars)
		if err == nil {
			t.Errorf("%v: accepted", tc.vars)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %v does not name %s", tc.vars, err, w)
			}
		}
		for k, v := range tc.vars {
			if strings.HasSuffix(k, "_KEY") && strings.Contains(err.Error(), v+"\"") {
				t.Errorf("%v: the error shows the secret %s: %v", tc.vars, k, err)
			}
		}
	}
}
