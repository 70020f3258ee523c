package paystack

import (
	"strings"
	"testing"

	"merchantpay/internal/rails"
)

func TestProviderReference(t *testing.T) {
	const wth = "WTH-0b7e8f7c-3f2a-4d55-9a51-8f0b3c2d1e77"
	if got := ProviderReference(wth); got != strings.ToLower(wth) {
		t.Fatalf("ProviderReference(%s) = %s", wth, got)
	}
	seen := map[string]string{}
	for _, ref := range []string{wth, "WTH-1", "short", "", "ref_abcdefghijklmnop", "Ünïcode reference 123456",
		strings.Repeat("x", 51), strings.Repeat("x", 50), "with spaces and / slashes 42", "DEP-" + strings.Repeat("9", 60)} {
		got := ProviderReference(ref)
		if !ValidReference(got) {
			t.Errorf("ProviderReference(%q) = %q breaks Paystack's rules", ref, got)
		}
		if ProviderReference(ref) != got {
			t.Errorf("ProviderReference(%q) is not deterministic", ref)
		}
		if prev, ok := seen[got]; ok {
			t.Errorf("%q and %q share %q", prev, ref, got)
		}
		seen[got] = ref
	}
	if got := ProviderReference(strings.Repeat("x", 51)); !strings.HasPrefix(got, hashedPrefix) {
		t.Errorf("a 51-character reference kept its form: %q", got)
	}
}

func TestPayoutStatusMapping(t *testing.T) {
	for s, want := range map[string]rails.PayoutStatus{
		"pending": rails.PayoutPending, "otp": rails.PayoutPending, "received": rails.PayoutPending,
		"success": rails.PayoutSucceeded, "failed": rails.PayoutFailed, "abandoned": rails.PayoutFailed,
		"blocked": rails.PayoutFailed, "rejected": rails.PayoutFailed, "reversed": rails.PayoutReversed,
	} {
		if got, ok := payoutStatus(s); !ok || got != want {
			t.Errorf("payoutStatus(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "SUCCESS", "queued", "processing"} {
		if _, ok := payoutStatus(s); ok {
			t.Errorf("payoutStatus(%q) is known", s)
		}
	}
}
