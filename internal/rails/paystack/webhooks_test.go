package paystack_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/paystack"
	"merchantpay/internal/rails/paystack/paystackfake"
)

// The worked vector of the shared provider notes (computed, not Paystack's).
const (
	vectorKey  = "sk_test_fake_key_for_fixture"
	vectorBody = `{"event":"transfer.success","data":{"reference":"payout_0000000000000001","status":"success","amount":100000,"currency":"NGN"}}`
	vectorSig  = "49a5c2878e3fcdc41b8a61f73294a60ca79b8412ee30e8902c270c77431f1c02d8fea12a15d84fbdfd4b46d0e2ccf47b9e347ad1f87a0d9827dd6f8bb960a94b"
)

func sigHeader(sig string) http.Header {
	h := http.Header{}
	if sig != "" {
		h.Set("x-paystack-signature", sig)
	}
	return h
}

func TestWebhookSignatureTestVector(t *testing.T) {
	c, err := paystack.New(rails.ProviderConfig{}, vectorKey)
	if err != nil {
		t.Fatal(err)
	}
	if got := paystack.Sign(vectorKey, []byte(vectorBody)); got != vectorSig {
		t.Fatalf("Sign = %s", got)
	}
	if err := c.Verify(context.Background(), sigHeader(vectorSig), []byte(vectorBody)); err != nil {
		t.Fatalf("Verify of the test vector: %v", err)
	}
	ns, err := c.Notices([]byte(vectorBody))
	if err != nil || len(ns) != 1 || ns[0].Payout == nil {
		t.Fatalf("Notices = %+v, %v", ns, err)
	}
	p := ns[0].Payout
	if ns[0].Key != "transfer.success:payout_0000000000000001" || p.Status != rails.PayoutSucceeded ||
		p.Amount != 100000 || p.Currency != money.NGN || p.ProviderReference != "payout_0000000000000001" {
		t.Fatalf("notice = %+v, payout %+v", ns[0], p)
	}
}

func TestWebhookBadSignature(t *testing.T) {
	c, _ := paystack.New(rails.ProviderConfig{}, vectorKey)
	tampered := strings.Replace(vectorBody, "100000", "900000", 1)
	for name, tc := range map[string]struct{ sig, body string }{
		"tampered body":  {vectorSig, tampered},
		"missing header": {"", vectorBody},
		"not hex":        {"zz" + vectorSig[2:], vectorBody},
		"truncated":      {vectorSig[:64], vectorBody},
		"other key":      {paystack.Sign("sk_test_other", []byte(vectorBody)), vectorBody},
		"body re-spaced": {vectorSig, strings.ReplaceAll(vectorBody, ":", ": ")},
	} {
		if err := c.Verify(context.Background(), sigHeader(tc.sig), []byte(tc.body)); !errors.Is(err, paystack.ErrBadSignature) {
			t.Errorf("%s: Verify = %v, want ErrBadSignature", name, err)
		}
	}
}

func TestTransferWebhooks(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	ctx := context.Background()
	refs := map[string]string{}
	for _, r := range []string{"WTH-aaaaaaaa-0000-4000-8000-000000000001", "WTH-aaaaaaaa-0000-4000-8000-000000000002"} {
		if _, err := c.SubmitPayout(ctx, payout(r)); err != nil {
			t.Fatal(err)
		}
		refs[r] = paystack.ProviderReference(r)
	}
	ok, bad := refs["WTH-aaaaaaaa-0000-4000-8000-000000000001"], refs["WTH-aaaaaaaa-0000-4000-8000-000000000002"]
	if _, err := f.TransferEvent(ok); !errors.Is(err, paystackfake.ErrWrongState) {
		t.Fatalf("a pending transfer's event: %v", err)
	}
	_ = f.Settle(ok)
	_ = f.Fail(bad, "Beneficiary bank unavailable")

	read := func(ref string) rails.Notice {
		t.Helper()
		b, err := f.TransferEvent(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Verify(ctx, sigHeader(f.Sign(b)), b); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		ns, err := c.Notices(b)
		if err != nil || len(ns) != 1 || ns[0].Payout == nil {
			t.Fatalf("Notices = %+v, %v", ns, err)
		}
		return ns[0]
	}
	tr, _ := f.Transfer(ok)
	n := read(ok)
	if n.Key != "transfer.success:"+ok || n.Payout.Status != rails.PayoutSucceeded || n.Payout.Amount != 1_500_075 ||
		n.Payout.ProviderReference != ok || n.Payout.ProviderID != tr.Code || n.Payout.At.IsZero() {
		t.Fatalf("success notice %+v %+v", n, n.Payout)
	}
	n = read(bad)
	if n.Key != "transfer.failed:"+bad || n.Payout.Status != rails.PayoutFailed ||
		!strings.Contains(n.Payout.Reason, "Beneficiary bank unavailable") {
		t.Fatalf("failed notice %+v %+v", n, n.Payout)
	}
	_ = f.Reverse(ok)
	n = read(ok)
	if n.Key != "transfer.reversed:"+ok || n.Payout.Status != rails.PayoutReversed || n.Payout.Reason == "" {
		t.Fatalf("reversed notice %+v %+v", n, n.Payout)
	}
}

func TestInflowWebhook(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	va, err := c.CreateVirtualAccount(context.Background(), vaRequest("acct-ref-inflow"))
	if err != nil {
		t.Fatal(err)
	}
	b, ref, err := f.InflowEvent(paystackfake.Inflow{AccountNumber: va.AccountNumber, Amount: 2_500_050,
		Narration: "TRF FRM JOHN DOE REF DEP-123", SenderName: "JOHN DOE", SenderBank: "Kuda Bank", SenderAccount: "2001234567"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Verify(context.Background(), sigHeader(f.Sign(b)), b); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	ns, err := c.Notices(b)
	if err != nil || len(ns) != 1 || ns[0].Inflow == nil {
		t.Fatalf("Notices = %+v, %v", ns, err)
	}
	in := ns[0].Inflow
	if ns[0].Key != "charge.success:"+ref || in.ProviderReference != ref || in.AccountNumber != va.AccountNumber ||
		in.CustomerCode != va.CustomerCode || in.Amount != 2_500_050 || in.Currency != money.NGN ||
		in.Narration != "TRF FRM JOHN DOE REF DEP-123" || in.SenderName != "JOHN DOE" || in.SenderBank != "Kuda Bank" ||
		in.SenderAccount != "XXXXXX4567" || in.PaidAt.IsZero() {
		t.Fatalf("inflow = %+v", in)
	}
}

func TestOtherEventsHaveNoPayload(t *testing.T) {
	c, _ := paystack.New(rails.ProviderConfig{}, vectorKey)
	for body, key := range map[string]string{
		`{"event":"charge.success","data":{"id":77,"reference":"T123","amount":5000,"currency":"NGN","status":"success","channel":"card","authorization":{"channel":"card"}}}`: "charge.success:T123",
		`{"event":"transfer.otp","data":{"id":91}}`: "transfer.otp:91",
	} {
		ns, err := c.Notices([]byte(body))
		if err != nil || len(ns) != 1 || ns[0].Key != key || ns[0].Payout != nil || ns[0].Inflow != nil || ns[0].Order != nil {
			t.Errorf("%s: %+v, %v", body, ns, err)
		}
	}
	for _, body := range []string{`not json`, `{"data":{}}`,
		`{"event":"transfer.success","data":{"reference":"abc","amount":100.5,"currency":"NGN"}}`,
		`{"event":"transfer.success","data":{"reference":"abc","amount":"100","currency":"NGN"}}`,
		`{"event":"transfer.failed","data":{"reference":"abc","currency":"NGN"}}`,
	} {
		if ns, err := c.Notices([]byte(body)); err == nil {
			t.Errorf("%s: %+v, want an error", body, ns)
		}
	}
}

// An inflow in a currency other than NGN is read, its currency passed on
// as Paystack sent it: the service records it for an operator, where a
// delivery refused as unreadable would be redelivered forever.
func TestInflowInAnotherCurrencyIsRead(t *testing.T) {
	c, _ := paystack.New(rails.ProviderConfig{}, vectorKey)
	body := `{"event":"charge.success","data":{"reference":"r1","amount":100,"currency":"GHS","status":"success",` +
		`"authorization":{"channel":"dedicated_nuban","receiver_bank_account_number":"1234567890"}}}`
	ns, err := c.Notices([]byte(body))
	if err != nil || len(ns) != 1 || ns[0].Inflow == nil {
		t.Fatalf("Notices = %+v, %v", ns, err)
	}
	if in := ns[0].Inflow; in.Currency != "GHS" || in.Amount != 100 || in.AccountNumber != "1234567890" {
		t.Fatalf("inflow = %+v", in)
	}
}

func TestEventsWithoutIDsKeyedByBody(t *testing.T) {
	c, _ := paystack.New(rails.ProviderConfig{}, vectorKey)
	a := `{"event":"dedicatedaccount.assign.success","data":{"customer":{"customer_code":"CUS_a"}}}`
	b := `{"event":"dedicatedaccount.assign.success","data":{"customer":{"customer_code":"CUS_b"}}}`
	key := func(body string) string {
		t.Helper()
		ns, err := c.Notices([]byte(body))
		if err != nil || len(ns) != 1 || ns[0].Payout != nil || ns[0].Inflow != nil {
			t.Fatalf("%s: %+v, %v", body, ns, err)
		}
		return ns[0].Key
	}
	ka, kb := key(a), key(b)
	if ka == kb || ka != key(a) || !strings.HasPrefix(ka, "dedicatedaccount.assign.success:body-") {
		t.Fatalf("keys %q and %q", ka, kb)
	}
}

// TestWebhookDelivery runs the fake's deliveries through a receiver built
// on the adapter: signed ones are acknowledged, a bad signature is 401.
func TestWebhookDelivery(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f.URL())
	var got []rails.Notice
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if err := c.Verify(r.Context(), r.Header, b); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		ns, err := c.Notices(b)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		got = append(got, ns...)
		ct, ack := c.Ack()
		w.Header().Set("Content-Type", ct)
		w.Write(ack)
	}))
	defer recv.Close()
	ctx := context.Background()
	if _, err := c.SubmitPayout(ctx, payout(ourRef)); err != nil {
		t.Fatal(err)
	}
	ref := paystack.ProviderReference(ourRef)
	_ = f.Settle(ref)
	d, err := f.SendTransferEvent(ctx, recv.URL, ref)
	if err != nil || d.Status != http.StatusOK || string(d.Body) != "{}" {
		t.Fatalf("delivery: %+v, %v", d, err)
	}
	d, _, err = f.SendInflow(ctx, recv.URL, paystackfake.Inflow{AccountNumber: "9999999999", Amount: 100})
	if err != nil || d.Status != http.StatusOK {
		t.Fatalf("inflow delivery: %+v, %v", d, err)
	}
	b, _ := f.TransferEvent(ref)
	d, err = f.Post(ctx, recv.URL, b, paystack.Sign("sk_test_wrong", b))
	if err != nil || d.Status != http.StatusUnauthorized {
		t.Fatalf("bad signature delivery: %+v, %v", d, err)
	}
	if len(got) != 2 || got[0].Payout == nil || got[1].Inflow == nil || got[1].Inflow.CustomerCode != "" {
		t.Fatalf("notices received: %+v", got)
	}
}
