package paystack_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/paystack"
	"merchantpay/internal/rails/paystack/paystackfake"
)

const testKey = "sk_test_4f1c0ffee0123456789abcdef"

// Beneficiary known to the fake's banks.
const (
	benBank    = "058"
	benAccount = "0123456789"
	benName    = "ADAEZE OKAFOR"
)

func newFake(t *testing.T) *paystackfake.Fake {
	t.Helper()
	f := paystackfake.New(testKey)
	t.Cleanup(f.Close)
	f.AddAccount(benBank, benAccount, benName)
	return f
}

func newClient(t *testing.T, baseURL string, opts ...paystack.Option) *paystack.Client {
	t.Helper()
	return newClientTimeout(t, baseURL, 2*time.Second, opts...)
}

func newClientTimeout(t *testing.T, baseURL string, timeout time.Duration, opts ...paystack.Option) *paystack.Client {
	t.Helper()
	c, err := paystack.New(rails.ProviderConfig{BaseURL: baseURL, Timeout: timeout}, testKey, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func payout(ref string) rails.Payout {
	return rails.Payout{Reference: ref, Currency: money.NGN, Amount: 1_500_075, Country: "NG", BankCode: benBank,
		AccountNumber: benAccount, AccountName: benName, Narration: "Invoice 42"}
}

// body decodes a recorded request body keeping numbers exact.
func body(t *testing.T, r paystackfake.Request) map[string]any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(r.Body)))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%s %s: body %q is not a JSON object: %v", r.Method, r.Path, r.Body, err)
	}
	return m
}

// wantFields checks a body holds exactly the wanted fields and values
// (json.Number for numbers).
func wantFields(t *testing.T, r paystackfake.Request, want map[string]any) {
	t.Helper()
	got := body(t, r)
	for k, v := range want {
		if g, ok := got[k]; !ok || !reflect.DeepEqual(g, v) {
			t.Errorf("%s %s: field %s = %#v (present %v), want %#v", r.Method, r.Path, k, g, ok, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s %s: unexpected field %s = %#v", r.Method, r.Path, k, got[k])
		}
	}
}

// wantAuth checks every request carried the Bearer key and JSON headers.
func wantAuth(t *testing.T, reqs []paystackfake.Request) {
	t.Helper()
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
			t.Errorf("%s %s: Authorization %q", r.Method, r.Path, got)
		}
		if r.Method == http.MethodPost && r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: Content-Type %q", r.Method, r.Path, r.Header.Get("Content-Type"))
		}
	}
}

// paths lists the requests as "METHOD path".
func paths(reqs []paystackfake.Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Method + " " + r.Path
	}
	return out
}
