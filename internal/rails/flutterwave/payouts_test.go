package flutterwave_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/flutterwave"
	"merchantpay/internal/rails/flutterwave/flutterwavefake"
)

const (
	secretKey = "FLWSECK_TEST-0123456789abcdef-X"
	hash      = "my_secret_hash"
)

func setup(t *testing.T) (*flutterwave.Client, *flutterwavefake.Fake) {
	t.Helper()
	fake := flutterwavefake.Start(secretKey, hash)
	t.Cleanup(fake.Close)
	c, err := flutterwave.New(rails.ProviderConfig{BaseURL: fake.URL(), Timeout: 300 * time.Millisecond}, secretKey, hash)
	if err != nil {
		t.Fatal(err)
	}
	return c, fake
}

func ghPayout(ref string, amount int64) rails.Payout {
	return rails.Payout{Reference: ref, Currency: money.GHS, Amount: amount, Country: banks.CountryGH,
		BankCode: "GH280100", BranchCode: "GH280103", AccountNumber: "0123456789",
		AccountName: "Ama Mensah", Narration: "Payout WTH-1"}
}

func TestMajorAmountIsExact(t *testing.T) {
	for _, c := range []struct {
		minor int64
		want  string
	}{{1234, "12.34"}, {1, "0.01"}, {10, "0.1"}, {100, "1"}, {1000000000000, "10000000000"},
		{29, "0.29"}, {57, "0.57"}, {1000000000001, "10000000000.01"}} {
		if got := flutterwave.MajorAmount(c.minor, money.GHS); string(got) != c.want {
			t.Errorf("MajorAmount(%d) = %s, want %s", c.minor, got, c.want)
		}
	}
}

func TestProviderReference(t *testing.T) {
	ref := "WTH-0b9f4a4e-8c3e-4f0e-9d1a-2b7e5c6d7e8f"
	if got := flutterwave.ProviderReference(ref); got != ref {
		t.Fatalf("a plain reference is kept: got %q", got)
	}
	odd := "WTH/with spaces " + strings.Repeat("x", 120)
	got := flutterwave.ProviderReference(odd)
	if got != flutterwave.ProviderReference(odd) || len(got) > 100 || strings.ContainsAny(got, "/ ") {
		t.Fatalf("derived reference %q is not deterministic and within Flutterwave's rules", got)
	}
	if got == flutterwave.ProviderReference(odd+"y") {
		t.Fatal("two references derive the same provider reference")
	}
}

func TestSubmitPayoutSendsEveryFieldAfterALookUp(t *testing.T) {
	c, fake := setup(t)
	p := ghPayout("WTH-submit-1", 1234)
	res, err := c.SubmitPayout(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != rails.PayoutPending || res.RailsReference == "" || res.ProviderAmount != 1234 || res.NextCheck.IsZero() {
		t.Fatalf("result %+v", res)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("want a look-up then a submission, got %d requests", len(reqs))
	}
	look, sub := reqs[0], reqs[1]
	if look.Method != "GET" || look.Path != "/v3/transfers" || look.Query.Get("reference") != "WTH-submit-1" {
		t.Fatalf("look-up %s %s?%s", look.Method, look.Path, look.Query.Encode())
	}
	if sub.Method != "POST" || sub.Path != "/v3/transfers" {
		t.Fatalf("submission %s %s", sub.Method, sub.Path)
	}
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "Bearer "+secretKey {
			t.Fatalf("%s %s: Authorization %q", r.Method, r.Path, r.Header.Get("Authorization"))
		}
	}
	if ct := sub.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal(sub.Body, &body); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"account_bank": `"GH280100"`, "account_number": `"0123456789"`, "amount": `12.34`,
		"currency": `"GHS"`, "narration": `"Payout WTH-1"`, "reference": `"WTH-submit-1"`,
		"destination_branch_code": `"GH280103"`, "beneficiary_name": `"Ama Mensah"`,
	}
	for k, v := range want {
		if string(body[k]) != v {
			t.Errorf("field %s = %s, want %s", k, body[k], v)
		}
	}
	if len(body) != len(want) {
		t.Errorf("body has %d fields, want %d: %s", len(body), len(want), sub.Body)
	}
	if tr, _ := fake.Transfer("WTH-submit-1"); tr.Status != "NEW" || res.RailsReference != jsonID(tr.ID) {
		t.Fatalf("fake transfer %+v, result %+v", tr, res)
	}
}

func jsonID(id int64) string { b, _ := json.Marshal(id); return string(b) }

func TestSubmitPayoutRefusesAGhanaPayoutWithoutBranch(t *testing.T) {
	c, fake := setup(t)
	p := ghPayout("WTH-nobranch", 500)
	p.BranchCode = ""
	p.Amount = 0
	_, err := c.SubmitPayout(context.Background(), p)
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Kind != apperr.Validation || len(ae.Fields) != 2 {
		t.Fatalf("want a validation error naming branch_code and amount, got %v", err)
	}
	if len(fake.Requests()) != 0 {
		t.Fatal("a bad payout reached Flutterwave")
	}
}

func TestPayoutSucceeds(t *testing.T) {
	c, fake := setup(t)
	p := ghPayout("WTH-ok", 250075)
	sub, err := c.SubmitPayout(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := fake.Complete("WTH-ok", "SUCCESSFUL", "Transaction was successful"); err != nil {
		t.Fatal(err)
	}
	res, err := c.CheckPayout(context.Background(), rails.PayoutQuery{Payout: p, RailsReference: sub.RailsReference})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != rails.PayoutSucceeded || res.ProviderAmount != 250075 || res.SettledAt.IsZero() {
		t.Fatalf("result %+v", res)
	}
	last := fake.Requests()[len(fake.Requests())-1]
	if last.Method != "GET" || last.Path != "/v3/transfers/"+sub.RailsReference {
		t.Fatalf("check by id went to %s %s", last.Method, last.Path)
	}
}

func TestPayoutFailsWithFlutterwavesReason(t *testing.T) {
	c, fake := setup(t)
	p := ghPayout("WTH-fail", 1000)
	if _, err := c.SubmitPayout(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if err := fake.Complete("WTH-fail", "FAILED", "DISBURSE FAILED: Account is dormant"); err != nil {
		t.Fatal(err)
	}
	res, err := c.CheckPayout(context.Background(), rails.PayoutQuery{Payout: p})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != rails.PayoutFailed || res.Reason != "DISBURSE FAILED: Account is dormant" {
		t.Fatalf("result %+v", res)
	}
}

func TestCheckPayoutWithoutRecord(t *testing.T) {
	c, _ := setup(t)
	_, err := c.CheckPayout(context.Background(), rails.PayoutQuery{Payout: ghPayout("WTH-none", 100)})
	if !errors.Is(err, rails.ErrNoRecord) {
		t.Fatalf("want ErrNoRecord, got %v", err)
	}
}

func TestTimeoutThenLookUpNeverPaysTwice(t *testing.T) {
	for _, fl := range []flutterwavefake.Failure{flutterwavefake.TimeoutAfter, flutterwavefake.ServerErrorAfter} {
		c, fake := setup(t)
		p := ghPayout("WTH-retry", 700)
		fake.FailNext(flutterwavefake.None, fl) // the look-up answers, the submission is lost after it lands
		_, err := c.SubmitPayout(context.Background(), p)
		if !errors.Is(err, rails.ErrOutcomeUnknown) {
			t.Fatalf("failure %d: want ErrOutcomeUnknown, got %v", fl, err)
		}
		res, err := c.SubmitPayout(context.Background(), p)
		if err != nil || res.Status != rails.PayoutPending {
			t.Fatalf("failure %d: second submission %+v, %v", fl, res, err)
		}
		if n := countPosts(fake); n != 1 || len(fake.Transfers()) != 1 {
			t.Fatalf("failure %d: %d submissions, %d transfers; want 1 and 1", fl, n, len(fake.Transfers()))
		}
	}
}

func TestTimeoutBeforeCreatingSubmitsOnce(t *testing.T) {
	c, fake := setup(t)
	p := ghPayout("WTH-lost", 700)
	fake.FailNext(flutterwavefake.None, flutterwavefake.TimeoutBefore)
	if _, err := c.SubmitPayout(context.Background(), p); !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("want ErrOutcomeUnknown, got %v", err)
	}
	if _, err := c.SubmitPayout(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if n := countPosts(fake); n != 2 || len(fake.Transfers()) != 1 {
		t.Fatalf("%d submissions, %d transfers; want 2 and 1", n, len(fake.Transfers()))
	}
}

func TestLookUpFailureSubmitsNothing(t *testing.T) {
	c, fake := setup(t)
	fake.FailNext(flutterwavefake.ServerErrorBefore)
	if _, err := c.SubmitPayout(context.Background(), ghPayout("WTH-blind", 700)); !errors.Is(err, rails.ErrOutcomeUnknown) {
		t.Fatalf("want ErrOutcomeUnknown, got %v", err)
	}
	if n := countPosts(fake); n != 0 {
		t.Fatalf("submitted blind %d times", n)
	}
}

func TestRefusalIsAFailedPayout(t *testing.T) {
	c, fake := setup(t)
	p := ghPayout("WTH-refused", 700)
	p.AccountNumber = "01234-567" // the fake takes digits only
	res, err := c.SubmitPayout(context.Background(), p)
	if err != nil || res.Status != rails.PayoutFailed || !strings.Contains(res.Reason, "account_number") {
		t.Fatalf("result %+v, %v", res, err)
	}
	if len(fake.Transfers()) != 0 {
		t.Fatal("a refused transfer exists")
	}
}

func TestErrorsNeverCarryTheKey(t *testing.T) {
	fake := flutterwavefake.Start("another-key", hash)
	defer fake.Close()
	c, err := flutterwave.New(rails.ProviderConfig{BaseURL: fake.URL(), Timeout: time.Second}, secretKey, hash)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SubmitPayout(context.Background(), ghPayout("WTH-key", 100))
	if err == nil || strings.Contains(err.Error(), secretKey) {
		t.Fatalf("error %v", err)
	}
	fake.FailNext(flutterwavefake.TimeoutBefore)
	_, err = c.CheckPayout(context.Background(), rails.PayoutQuery{Payout: ghPayout("WTH-key", 100)})
	if !errors.Is(err, rails.ErrOutcomeUnknown) || strings.Contains(err.Error(), secretKey) {
		t.Fatalf("error %v", err)
	}
}

func countPosts(f *flutterwavefake.Fake) int {
	n := 0
	for _, r := range f.Requests() {
		if r.Method == http.MethodPost {
			n++
		}
	}
	return n
}

// A provider that echoes the request's credentials in its message must not
// carry them into our errors (which reach logs).
func TestEchoedKeyIsRedacted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"status":"error","message":"bad key ` + r.Header.Get("Authorization") + `","data":null}`))
	}))
	defer srv.Close()
	c, err := flutterwave.New(rails.ProviderConfig{BaseURL: srv.URL}, secretKey, hash)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CheckPayout(context.Background(), rails.PayoutQuery{Payout: ghPayout("WTH-echo", 100)})
	if err == nil || strings.Contains(err.Error(), secretKey) || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("error %v", err)
	}
}

// A list that ignores the reference filter proves nothing: no submission.
func TestUnfilteredListIsNoProofOfAbsence(t *testing.T) {
	var posts int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts++
		}
		_, _ = w.Write([]byte(`{"status":"success","message":"Transfers fetched","data":[{"id":1,"reference":"someone-else","status":"NEW","amount":1,"currency":"GHS"}]}`))
	}))
	defer srv.Close()
	c, err := flutterwave.New(rails.ProviderConfig{BaseURL: srv.URL}, secretKey, hash)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubmitPayout(context.Background(), ghPayout("WTH-mine", 100)); !errors.Is(err, rails.ErrOutcomeUnknown) || posts != 0 {
		t.Fatalf("error %v after %d submissions", err, posts)
	}
}

// A process that dies after submitting finds the transfer on restart and
// records it instead of paying again.
func TestRestartAfterSubmitFindsTheTransfer(t *testing.T) {
	c, fake := setup(t)
	p := ghPayout("WTH-crash", 4200)
	first, err := c.SubmitPayout(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	restarted, err := flutterwave.New(rails.ProviderConfig{BaseURL: fake.URL()}, secretKey, hash)
	if err != nil {
		t.Fatal(err)
	}
	again, err := restarted.SubmitPayout(context.Background(), p)
	if err != nil || again.RailsReference != first.RailsReference || len(fake.Transfers()) != 1 || countPosts(fake) != 1 {
		t.Fatalf("after a restart: %+v, %v; %d transfers, %d submissions", again, err, len(fake.Transfers()), countPosts(fake))
	}
}
