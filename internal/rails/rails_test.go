package rails

import (
	"context"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/clock"
)

func sandbox(t *testing.T, c clock.Clock) (*Sandbox, *banks.Directory) {
	t.Helper()
	dir, err := banks.Load()
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSandbox(dir, c, SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

func TestIssuingBankDefaultsToWema(t *testing.T) {
	s, dir := sandbox(t, clock.NewFake(time.Now()))
	want, _ := dir.NGByCode("035")
	if got := s.IssuingBank(); got != want || got.Name != "Wema Bank" {
		t.Fatalf("issuing bank %+v, want %+v", got, want)
	}
	seen := map[string]bool{}
	for range 2000 {
		iss, err := s.IssueAccountNumber(context.Background(), IssueRequest{Reference: "r"})
		if err != nil {
			t.Fatal(err)
		}
		if !banks.ValidNUBAN("035", iss.AccountNumber) || iss.AccountNumber[0] == '0' {
			t.Fatalf("%s is not a valid NUBAN at 035 without a leading zero", iss.AccountNumber)
		}
		if iss.BankCode != "035" || iss.BankName != want.Name {
			t.Fatalf("issued at %s %q", iss.BankCode, iss.BankName)
		}
		seen[iss.AccountNumber] = true
	}
	if len(seen) < 1990 {
		t.Fatalf("only %d distinct numbers in 2000 draws", len(seen))
	}
}

func TestNewSandboxRejectsBadIssuingBank(t *testing.T) {
	dir, _ := banks.Load()
	for _, code := range []string{"999", "50211", "GH030100"} {
		if _, err := NewSandbox(dir, clock.Real{}, SandboxOptions{IssuingBankCode: code}); err == nil {
			t.Errorf("issuing bank %q accepted", code)
		}
	}
	if s, err := NewSandbox(dir, clock.Real{}, SandboxOptions{IssuingBankCode: "058"}); err != nil || s.IssuingBank().Code != "058" {
		t.Fatalf("058: %v", err)
	}
}

func TestSandboxNameIsStableAndRealistic(t *testing.T) {
	a := SandboxName("058", "0123456789")
	if a != SandboxName("058", "0123456789") {
		t.Fatal("name enquiry is not stable")
	}
	if a == SandboxName("044", "0123456789") || a == SandboxName("058", "0123456788") {
		t.Fatal("name does not depend on bank and number")
	}
	distinct := map[string]bool{}
	for i := range 500 {
		n := SandboxName("035", strings.Repeat("1", 6)+string(rune('0'+i%10))+string(rune('0'+i/10%10))+string(rune('0'+i/100))+"0")
		parts := strings.Fields(n)
		if len(parts) < 2 || len(parts) > 3 || n != strings.ToUpper(n) {
			t.Fatalf("unrealistic name %q", n)
		}
		distinct[n] = true
	}
	if len(distinct) < 400 {
		t.Fatalf("only %d distinct names for 500 accounts", len(distinct))
	}
}

func TestNameEnquiry(t *testing.T) {
	s, dir := sandbox(t, clock.Real{})
	e := NewNameEnquiry(dir, s)
	str := func(v string) *string { return &v }
	ctx := context.Background()

	res, err := e.Resolve(ctx, nil, ResolveInput{Bank: str("058"), Account: str("0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	if res.BankName != "Guaranty Trust Bank" || res.BankCode != "058" || res.AccountNumber != "0123456789" ||
		res.AccountName != SandboxName("058", "0123456789") {
		t.Fatalf("resolved %+v", res)
	}

	for _, tc := range []struct {
		name          string
		bank, account *string
		kind          apperr.Kind
		fields        string
	}{
		{"not resolved", str("058"), str(UnresolvableAccount), apperr.AccountNotResolved, "account"},
		{"unknown bank", str("999"), str("0123456789"), apperr.UnknownBank, "bank"},
		{"ghana bank", str("GH030100"), str("0123456789"), apperr.UnknownBank, "bank"},
		{"short account", str("058"), str("12345"), apperr.Validation, "account"},
		{"letters", str("058"), str("01234567AB"), apperr.Validation, "account"},
		{"missing both", nil, nil, apperr.Validation, "bank,account"},
		{"empty bank", str(""), str("0123456789"), apperr.Validation, "bank"},
	} {
		_, err := e.Resolve(ctx, nil, ResolveInput{Bank: tc.bank, Account: tc.account})
		ae := apperr.As(err)
		var fields []string
		for _, f := range ae.Fields {
			fields = append(fields, f.Field)
		}
		if ae.Kind != tc.kind || strings.Join(fields, ",") != tc.fields {
			t.Errorf("%s: %s %v, want %s %s", tc.name, ae.Kind, fields, tc.kind, tc.fields)
		}
	}
}

func TestSandboxPayout(t *testing.T) {
	c := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	s, _ := sandbox(t, c)
	ctx := context.Background()
	p := Payout{Reference: "WTH-1", AccountNumber: "0123456789", BankCode: "058", Amount: 100}
	sub, err := s.SubmitPayout(ctx, p)
	if err != nil || sub.Status != PayoutPending || sub.RailsReference == "" || !sub.NextCheck.Equal(c.Now().Add(DefaultPayoutDelay)) {
		t.Fatalf("submit: %+v %v", sub, err)
	}
	again, _ := s.SubmitPayout(ctx, p)
	if again.RailsReference != sub.RailsReference {
		t.Fatal("resubmitting changed the rails reference")
	}
	q := PayoutQuery{Payout: p, RailsReference: sub.RailsReference, SubmittedAt: c.Now()}
	if r, _ := s.CheckPayout(ctx, q); r.Status != PayoutPending {
		t.Fatalf("before the delay: %+v", r)
	}
	c.Advance(DefaultPayoutDelay)
	if r, _ := s.CheckPayout(ctx, q); r.Status != PayoutSucceeded || !r.SettledAt.Equal(q.SubmittedAt.Add(DefaultPayoutDelay)) {
		t.Fatalf("after the delay: %+v", r)
	}
	q.Payout.AccountNumber = UnresolvableAccount
	if r, _ := s.CheckPayout(ctx, q); r.Status != PayoutFailed || r.Reason == "" {
		t.Fatalf("to %s: %+v", UnresolvableAccount, r)
	}
}
