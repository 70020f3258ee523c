package paystack

import (
	"testing"

	"merchantpay/internal/rails"
)

func TestBankCodeBySlugThenName(t *testing.T) {
	c, err := New(rails.ProviderConfig{}, "sk_test_x")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ slug, name, want string }{
		{"wema-bank", "WEMA BANK PLC", "035"},
		{"titan-paystack", "Titan Paystack", "100039"},
		{"", "wema bank", "035"},
		{"unknown-bank", "Access Bank", "044"},
		{"unknown-bank", "No Such Bank", ""},
	} {
		if got := c.bankCode(tc.slug, tc.name); got != tc.want {
			t.Errorf("bankCode(%q, %q) = %q, want %q", tc.slug, tc.name, got, tc.want)
		}
	}
}
