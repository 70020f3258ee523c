package paystack_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/paystack"
	"merchantpay/internal/rails/paystack/paystackfake"
)

func TestResolveAccount(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	name, err := c.ResolveAccount(context.Background(), benBank, benAccount)
	if err != nil || name != benName {
		t.Fatalf("ResolveAccount = %q, %v", name, err)
	}
	reqs := f.Requests()
	wantAuth(t, reqs)
	if len(reqs) != 1 || reqs[0].Path != "/bank/resolve" || reqs[0].Query.Get("account_number") != benAccount ||
		reqs[0].Query.Get("bank_code") != benBank || len(reqs[0].Query) != 2 {
		t.Fatalf("requests = %+v", reqs)
	}

	_, err = c.ResolveAccount(context.Background(), benBank, "0000000001")
	if !apperr.Is(err, apperr.AccountNotResolved) {
		t.Fatalf("unknown account: %v, want ACCOUNT_NOT_RESOLVED", err)
	}
	f.FailNext(http.MethodGet, "/bank/resolve", paystackfake.ServerError, false)
	if _, err = c.ResolveAccount(context.Background(), benBank, benAccount); apperr.Is(err, apperr.AccountNotResolved) || err == nil {
		t.Fatalf("5xx: %v, want an error other than ACCOUNT_NOT_RESOLVED", err)
	}
}

func vaRequest(ref string) rails.VirtualAccountRequest {
	return rails.VirtualAccountRequest{Reference: ref, FirstName: "Chioma", LastName: "Eze",
		Email: "chioma@example.com", Phone: "+2348031234567"}
}

func TestCreateVirtualAccount(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	va, err := c.CreateVirtualAccount(context.Background(), vaRequest("acct-ref-0001"))
	if err != nil {
		t.Fatalf("CreateVirtualAccount: %v", err)
	}
	if !banks.IsAccountNumber(va.AccountNumber) || va.BankName != "Wema Bank" || va.BankCode != "035" ||
		!strings.HasPrefix(va.CustomerCode, "CUS_") || va.AccountName != "MERCHANTPAY/CHIOMA EZE" {
		t.Fatalf("account = %+v", va)
	}
	reqs := f.Requests()
	want := []string{"POST /customer", "GET /dedicated_account", "POST /dedicated_account"}
	if !slices.Equal(paths(reqs), want) {
		t.Fatalf("requests = %v, want %v", paths(reqs), want)
	}
	wantAuth(t, reqs)
	email := body(t, reqs[0])["email"].(string)
	if !strings.HasPrefix(email, "va-") || !strings.HasSuffix(email, "@accounts.merchantpay.invalid") {
		t.Fatalf("customer e-mail %q", email)
	}
	wantFields(t, reqs[0], map[string]any{"email": email, "first_name": "Chioma", "last_name": "Eze",
		"phone": "+2348031234567", "metadata": map[string]any{"account_reference": "acct-ref-0001"}})
	if q := reqs[1].Query; q.Get("active") != "true" || q.Get("currency") != "NGN" || q.Get("customer") == "" {
		t.Fatalf("list query = %v", q)
	}
	wantFields(t, reqs[2], map[string]any{"customer": va.CustomerCode, "preferred_bank": "wema-bank",
		"first_name": "Chioma", "last_name": "Eze", "phone": "+2348031234567"})
}

func TestCreateVirtualAccountAgainFindsTheSameAccount(t *testing.T) {
	f := newFake(t)
	c := newClientTimeout(t, f.URL(), time.Second)
	ctx := context.Background()
	f.FailNext(http.MethodPost, "/dedicated_account", paystackfake.Timeout, true)
	if _, err := c.CreateVirtualAccount(ctx, vaRequest("acct-ref-0002")); !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("first attempt: %v, want ErrOutcomeUnknown", err)
	}
	first, err := c.CreateVirtualAccount(ctx, vaRequest("acct-ref-0002"))
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	again, err := c.CreateVirtualAccount(ctx, vaRequest("acct-ref-0002"))
	if err != nil || again != first {
		t.Fatalf("third call = %+v, %v; want %+v", again, err, first)
	}
	if got := f.DedicatedAccounts(); len(got) != 1 || got[0].AccountNumber != first.AccountNumber {
		t.Fatalf("dedicated accounts at the fake: %+v", got)
	}
	other, err := c.CreateVirtualAccount(ctx, vaRequest("acct-ref-0003"))
	if err != nil || other.AccountNumber == first.AccountNumber || other.CustomerCode == first.CustomerCode {
		t.Fatalf("another reference got %+v, %v (first %+v)", other, err, first)
	}
}

func TestCustomerEmailDomain(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL(), paystack.WithCustomerEmailDomain("va.example.ng"))
	if _, err := c.CreateVirtualAccount(context.Background(), vaRequest("acct-ref-domain")); err != nil {
		t.Fatal(err)
	}
	if got := f.DedicatedAccounts(); len(got) != 1 || !strings.HasSuffix(got[0].CustomerEmail, "@va.example.ng") {
		t.Fatalf("accounts %+v", got)
	}
	for _, d := range []string{"", "localhost", "bad domain.com", "-x.com", "a..b", "x@y.com"} {
		if _, err := paystack.New(rails.ProviderConfig{}, testKey, paystack.WithCustomerEmailDomain(d)); err == nil {
			t.Errorf("New accepted the e-mail domain %q", d)
		}
	}
}

func TestCreateVirtualAccountAtAnotherBank(t *testing.T) {
	f := newFake(t)
	for slug, code := range map[string]string{"titan-paystack": "100039", "access-bank": "044", "test-bank": ""} {
		c := newClient(t, f.URL(), paystack.WithPreferredBank(slug))
		va, err := c.CreateVirtualAccount(context.Background(), vaRequest("acct-"+slug+"-000"))
		if err != nil || va.BankCode != code {
			t.Errorf("%s: %+v, %v; want bank code %q", slug, va, err, code)
		}
	}
}
