package paystack_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/paystack"
	"merchantpay/internal/rails/paystack/paystackfake"
)

const ourRef = "WTH-0b7e8f7c-3f2a-4d55-9a51-8f0b3c2d1e77"

func TestSubmitPayoutLooksUpThenCreatesRecipientAndTransfer(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	res, err := c.SubmitPayout(context.Background(), payout(ourRef))
	if err != nil {
		t.Fatalf("SubmitPayout: %v", err)
	}
	ref := paystack.ProviderReference(ourRef)
	if ref != strings.ToLower(ourRef) {
		t.Fatalf("ProviderReference = %q", ref)
	}
	if res.Status != rails.PayoutPending || res.RailsReference != ref || res.ProviderAmount != 1_500_075 || res.NextCheck.IsZero() {
		t.Fatalf("result = %+v", res)
	}
	reqs := f.Requests()
	want := []string{"GET /transfer/verify/" + ref, "POST /transferrecipient", "POST /transfer"}
	if !slices.Equal(paths(reqs), want) {
		t.Fatalf("requests = %v, want %v", paths(reqs), want)
	}
	wantAuth(t, reqs)
	wantFields(t, reqs[1], map[string]any{"type": "nuban", "name": benName, "account_number": benAccount,
		"bank_code": benBank, "currency": "NGN"})
	tr, ok := f.Transfer(ref)
	if !ok {
		t.Fatal("the fake holds no transfer")
	}
	wantFields(t, reqs[2], map[string]any{"source": "balance", "amount": json.Number("1500075"),
		"recipient": tr.RecipientCode, "reference": ref, "reason": "Invoice 42", "currency": "NGN"})
	if !strings.HasPrefix(tr.RecipientCode, "RCP_") || !strings.HasPrefix(tr.Code, "TRF_") || tr.Status != "pending" {
		t.Fatalf("transfer at the fake = %+v", tr)
	}
}

func TestPayoutSettlesFailsAndReverses(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	ctx := context.Background()
	submit := func(r string) string {
		t.Helper()
		if _, err := c.SubmitPayout(ctx, payout(r)); err != nil {
			t.Fatalf("SubmitPayout(%s): %v", r, err)
		}
		return paystack.ProviderReference(r)
	}
	check := func(ref string) rails.PayoutResult {
		t.Helper()
		res, err := c.CheckPayout(ctx, rails.PayoutQuery{RailsReference: ref})
		if err != nil {
			t.Fatalf("CheckPayout(%s): %v", ref, err)
		}
		return res
	}

	paid := submit(ourRef)
	if err := f.Settle(paid); err != nil {
		t.Fatal(err)
	}
	if res := check(paid); res.Status != rails.PayoutSucceeded || res.SettledAt.IsZero() || res.ProviderAmount != 1_500_075 {
		t.Fatalf("settled: %+v", res)
	}
	if err := f.Reverse(paid); err != nil {
		t.Fatal(err)
	}
	if res := check(paid); res.Status != rails.PayoutReversed || !strings.Contains(res.Reason, "reversed") {
		t.Fatalf("reversed: %+v", res)
	}

	failed := submit("WTH-1c7e8f7c-3f2a-4d55-9a51-8f0b3c2d1e77")
	if err := f.Fail(failed, "Account is dormant"); err != nil {
		t.Fatal(err)
	}
	res := check(failed)
	if res.Status != rails.PayoutFailed || !strings.Contains(res.Reason, "Account is dormant") {
		t.Fatalf("failed: %+v", res)
	}
	// The look-up also works from the payout alone.
	res, err := c.CheckPayout(ctx, rails.PayoutQuery{Payout: payout("WTH-1c7e8f7c-3f2a-4d55-9a51-8f0b3c2d1e77")})
	if err != nil || res.Status != rails.PayoutFailed {
		t.Fatalf("CheckPayout by payout: %+v, %v", res, err)
	}
}

// TestSubmitPayoutAgainFindsTheTransfer: a process killed between
// submitting and recording submits again on restart (a new client, no
// memory of the first) and finds the transfer instead of paying twice.
func TestSubmitPayoutAgainFindsTheTransfer(t *testing.T) {
	f := newFake(t)
	for i := 0; i < 3; i++ {
		res, err := newClient(t, f.URL()).SubmitPayout(context.Background(), payout(ourRef))
		if err != nil || res.Status != rails.PayoutPending {
			t.Fatalf("submit %d: %+v, %v", i, res, err)
		}
	}
	if n := len(f.RequestsTo(http.MethodPost, "/transfer")); n != 1 || f.TransferCount() != 1 {
		t.Fatalf("POST /transfer %d times, %d transfers; want 1 and 1", n, f.TransferCount())
	}
}

func TestTimeoutThenLookUp(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fault     paystackfake.Fault
		processed bool
		posts     int
	}{
		{"timeout, created nonetheless", paystackfake.Timeout, true, 1},
		{"timeout, not created", paystackfake.Timeout, false, 2},
		{"5xx, created nonetheless", paystackfake.ServerError, true, 1},
		{"5xx, not created", paystackfake.ServerError, false, 2},
		{"reset, created nonetheless", paystackfake.Reset, true, 1},
		{"garbage, not created", paystackfake.Garbage, false, 2},
		{"rate limited", paystackfake.RateLimited, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			c, err := paystack.New(rails.ProviderConfig{BaseURL: f.URL(), Timeout: time.Second}, testKey)
			if err != nil {
				t.Fatal(err)
			}
			f.FailNext(http.MethodPost, "/transfer", tc.fault, tc.processed)
			start := time.Now()
			_, err = c.SubmitPayout(context.Background(), payout(ourRef))
			if !errors.Is(err, rails.ErrOutcomeUnknown) {
				t.Fatalf("first submit: %v, want ErrOutcomeUnknown", err)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Fatalf("the call took %v despite a 1s timeout", d)
			}
			res, err := c.SubmitPayout(context.Background(), payout(ourRef))
			if err != nil || res.Status != rails.PayoutPending {
				t.Fatalf("second submit: %+v, %v", res, err)
			}
			if n := len(f.RequestsTo(http.MethodPost, "/transfer")); n != tc.posts {
				t.Fatalf("POST /transfer %d times, want %d", n, tc.posts)
			}
			if f.TransferCount() != 1 {
				t.Fatalf("%d transfers at the fake, want 1", f.TransferCount())
			}
		})
	}
}

func TestLookUpFailureSubmitsNothing(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	f.FailNext(http.MethodGet, "/transfer/verify/", paystackfake.ServerError, false)
	if _, err := c.SubmitPayout(context.Background(), payout(ourRef)); !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("SubmitPayout: %v, want ErrOutcomeUnknown", err)
	}
	if got := paths(f.Requests()); len(got) != 1 {
		t.Fatalf("requests after a failed look-up: %v", got)
	}
	if _, err := c.CheckPayout(context.Background(), rails.PayoutQuery{RailsReference: "wth-never-submitted-0001"}); !errors.Is(err, rails.ErrNoRecord) {
		t.Fatalf("CheckPayout of an unknown reference: %v, want ErrNoRecord", err)
	}
}

// staleLookUp answers the first look-up with Paystack's 404 although the
// transfer exists, as a race with another attempt would.
type staleLookUp struct{ done bool }

func (s *staleLookUp) RoundTrip(r *http.Request) (*http.Response, error) {
	if !s.done && strings.HasPrefix(r.URL.Path, "/transfer/verify/") {
		s.done = true
		rec := httptest.NewRecorder()
		rec.WriteHeader(http.StatusNotFound)
		rec.WriteString(`{"status":false,"message":"Transfer not found"}`)
		return rec.Result(), nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestDuplicateReferenceIsNeverReportedFailed(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	if _, err := c.SubmitPayout(context.Background(), payout(ourRef)); err != nil {
		t.Fatal(err)
	}
	racy, err := paystack.New(rails.ProviderConfig{BaseURL: f.URL(), Timeout: 2 * time.Second,
		Client: &http.Client{Transport: &staleLookUp{}}}, testKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := racy.SubmitPayout(context.Background(), payout(ourRef))
	if err != nil || res.Status != rails.PayoutPending {
		t.Fatalf("submit after a stale look-up: %+v, %v", res, err)
	}
	posts := f.RequestsTo(http.MethodPost, "/transfer")
	if len(posts) != 2 || f.TransferCount() != 1 {
		t.Fatalf("%d POST /transfer, %d transfers; want the second refused", len(posts), f.TransferCount())
	}
}

func TestFakeRefusesAReusedReference(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	if _, err := c.SubmitPayout(context.Background(), payout(ourRef)); err != nil {
		t.Fatal(err)
	}
	tr, _ := f.Transfer(paystack.ProviderReference(ourRef))
	req, _ := http.NewRequest(http.MethodPost, f.URL()+"/transfer", strings.NewReader(
		`{"source":"balance","amount":100,"recipient":"`+tr.RecipientCode+`","reference":"`+tr.Reference+`","currency":"NGN"}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env struct {
		Status bool   `json:"status"`
		Code   string `json:"code"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&env)
	if resp.StatusCode != http.StatusBadRequest || env.Status || env.Code != "duplicate_reference" {
		t.Fatalf("reused reference: HTTP %d %+v", resp.StatusCode, env)
	}
}

func TestRefusedBeneficiaryFailsWithoutTransfer(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	p := payout(ourRef)
	p.AccountNumber = "0000000001" // unknown at the bank
	res, err := c.SubmitPayout(context.Background(), p)
	if err != nil {
		t.Fatalf("SubmitPayout: %v", err)
	}
	if res.Status != rails.PayoutFailed || !strings.Contains(res.Reason, "Cannot resolve account") {
		t.Fatalf("result = %+v", res)
	}
	if n := len(f.RequestsTo(http.MethodPost, "/transfer")); n != 0 {
		t.Fatalf("POST /transfer %d times after a refused recipient", n)
	}
}

func TestRefusedTransferFailsWhenNothingExists(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/transferrecipient":
			w.Write([]byte(`{"status":true,"message":"ok","data":{"recipient_code":"RCP_x"}}`))
		case "/transfer":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":false,"message":"Your balance is not enough to fulfil this request","type":"validation_error","code":"insufficient_balance"}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"status":false,"message":"Transfer not found"}`))
		}
	}))
	defer srv.Close()
	c := newClient(t, srv.URL)
	res, err := c.SubmitPayout(context.Background(), payout(ourRef))
	if err != nil || res.Status != rails.PayoutFailed || !strings.Contains(res.Reason, "balance is not enough") {
		t.Fatalf("result = %+v, %v", res, err)
	}
}

// TestContradictoryAnswersAreUnknown: a redirect or an envelope whose
// status contradicts the HTTP status never reads as a result.
func TestContradictoryAnswersAreUnknown(t *testing.T) {
	for name, answer := range map[string]func(w http.ResponseWriter){
		"redirect": func(w http.ResponseWriter) {
			w.Header().Set("Location", "/transfer/verify/elsewhere-000000000")
			w.WriteHeader(http.StatusFound)
		},
		"4xx with status true": func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":true,"message":"Transfer has been queued","data":{"reference":"x"}}`))
		},
		"2xx with status false": func(w http.ResponseWriter) {
			w.Write([]byte(`{"status":false,"message":"Recipient specified is invalid","data":{"reference":"` +
				paystack.ProviderReference(ourRef) + `","status":"failed","amount":1500075,"currency":"NGN"}}`))
		},
	} {
		var gets int
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/transfer":
				answer(w)
			case r.URL.Path == "/transferrecipient":
				w.Write([]byte(`{"status":true,"message":"ok","data":{"recipient_code":"RCP_x"}}`))
			default:
				gets++
				w.WriteHeader(http.StatusNotFound)
				w.Write([]byte(`{"status":false,"message":"Transfer not found"}`))
			}
		}))
		res, err := newClient(t, srv.URL).SubmitPayout(context.Background(), payout(ourRef))
		srv.Close()
		if !errors.Is(err, rails.ErrOutcomeUnknown) || res.Status == rails.PayoutFailed {
			t.Errorf("%s: %+v, %v; want ErrOutcomeUnknown", name, res, err)
		}
		if gets != 1 {
			t.Errorf("%s: %d look-ups, want only the first", name, gets)
		}
	}
}

func TestSubmitPayoutRefusesWhatPaystackCannotCarry(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	p := payout(ourRef)
	p.Country, p.Currency, p.Amount = "GH", money.GHS, 0
	_, err := c.SubmitPayout(context.Background(), p)
	if err == nil || errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("SubmitPayout of a GH payout: %v", err)
	}
	for _, want := range []string{"country GH", "currency GHS", "amount"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if n := len(f.Requests()); n != 0 {
		t.Fatalf("%d requests sent for a payout refused up front", n)
	}
}
