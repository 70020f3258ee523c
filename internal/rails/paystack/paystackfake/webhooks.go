package paystackfake

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Sign is the x-paystack-signature of body: lowercase hex HMAC-SHA512 keyed
// with the fake's secret key.
func (f *Fake) Sign(body []byte) string {
	m := hmac.New(sha512.New, []byte(f.key))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Delivery is a webhook receiver's answer.
type Delivery struct {
	Status int
	Body   []byte
}

// Post delivers body to url with the given x-paystack-signature (use Sign,
// or anything else to test a bad signature).
func (f *Fake) Post(ctx context.Context, url string, body []byte, signature string) (Delivery, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Delivery{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if signature != "" {
		req.Header.Set("X-Paystack-Signature", signature)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Delivery{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return Delivery{Status: resp.StatusCode, Body: b}, nil
}

// TransferEvent is the webhook body Paystack sends for a transfer's current
// status: transfer.success, transfer.failed or transfer.reversed.
func (f *Fake) TransferEvent(ref string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.transfers[ref]
	if !ok {
		return nil, ErrNoTransfer
	}
	switch t.Status {
	case "success", "failed", "reversed":
	default:
		return nil, fmt.Errorf("%w: a %s transfer sends no webhook", ErrWrongState, t.Status)
	}
	d := t.data(true)
	d["integration"] = map[string]any{"id": 100032, "is_live": false, "business_name": "Merchantpay Test"}
	d["transferred_at"] = nilIfEmpty(t.TransferredAt)
	return json.Marshal(map[string]any{"event": "transfer." + t.Status, "data": d})
}

// SendTransferEvent signs and delivers TransferEvent(ref) to url.
func (f *Fake) SendTransferEvent(ctx context.Context, url, ref string) (Delivery, error) {
	body, err := f.TransferEvent(ref)
	if err != nil {
		return Delivery{}, err
	}
	return f.Post(ctx, url, body, f.Sign(body))
}

// Inflow is a bank transfer a payer makes into a dedicated account.
type Inflow struct {
	// AccountNumber is the dedicated account credited (it need not be one
	// the fake made: an inflow to an unknown account has no customer).
	AccountNumber string
	// Amount is in kobo.
	Amount        int64
	Narration     string
	SenderName    string
	SenderBank    string
	SenderAccount string
	// Reference is the charge's reference; empty draws a fresh one.
	Reference string
	// Currency is the charge's currency; empty is NGN.
	Currency string
}

// InflowEvent is the charge.success body Paystack sends for an inflow into
// a dedicated account, and the reference it carries.
func (f *Fake) InflowEvent(in Inflow) (body []byte, reference string, err error) {
	if in.Amount <= 0 {
		return nil, "", fmt.Errorf("paystackfake: inflow amount %d is not positive", in.Amount)
	}
	if in.Reference == "" {
		in.Reference = strings.ToLower(code("ref_"))
	}
	if in.Currency == "" {
		in.Currency = "NGN"
	}
	masked := in.SenderAccount
	if len(masked) > 4 {
		masked = strings.Repeat("X", len(masked)-4) + masked[len(masked)-4:]
	}
	f.mu.Lock()
	cust := map[string]any{"id": nil, "customer_code": nil, "email": nil}
	receiverBank := "Wema Bank"
	for _, d := range f.dvas {
		if d.AccountNumber == in.AccountNumber {
			cust, receiverBank = d.Customer.json(), d.Name
		}
	}
	id := f.id()
	f.mu.Unlock()
	at := now()
	data := map[string]any{"id": id, "domain": "test", "status": "success", "reference": in.Reference,
		"amount": in.Amount, "message": nil, "gateway_response": "Approved", "paid_at": at, "created_at": at,
		"channel": "dedicated_nuban", "currency": in.Currency, "fees": 0, "customer": cust, "metadata": map[string]any{},
		"authorization": map[string]any{"authorization_code": code("AUTH_"), "bin": "008XXX", "last4": "X553",
			"exp_month": "01", "exp_year": "2099", "channel": "dedicated_nuban", "card_type": "transfer",
			"bank": in.SenderBank, "country_code": "NG", "brand": "Managed Account", "reusable": false,
			"signature": nil, "account_name": nil, "sender_country": "NG", "sender_bank": in.SenderBank,
			"sender_bank_account_number": masked, "sender_name": in.SenderName, "narration": in.Narration,
			"receiver_bank_account_number": in.AccountNumber, "receiver_bank": receiverBank}}
	body, err = json.Marshal(map[string]any{"event": "charge.success", "data": data})
	return body, in.Reference, err
}

// SendInflow signs and delivers InflowEvent(in) to url; it returns the
// charge's reference with the receiver's answer.
func (f *Fake) SendInflow(ctx context.Context, url string, in Inflow) (Delivery, string, error) {
	body, ref, err := f.InflowEvent(in)
	if err != nil {
		return Delivery{}, "", err
	}
	d, err := f.Post(ctx, url, body, f.Sign(body))
	return d, ref, err
}
