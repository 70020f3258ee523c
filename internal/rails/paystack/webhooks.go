package paystack

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"merchantpay/internal/money"
	"merchantpay/internal/rails"
)

// SignatureHeader carries a webhook's signature: the lowercase hex
// HMAC-SHA512 of the raw body, keyed with the secret key.
const SignatureHeader = "X-Paystack-Signature"

// ErrBadSignature is Verify's answer to a delivery whose signature is
// missing or wrong.
var ErrBadSignature = errors.New("paystack: webhook signature missing or wrong")

// Sign is the signature Paystack puts on body for secretKey.
func Sign(secretKey string, body []byte) string {
	m := hmac.New(sha512.New, []byte(secretKey))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks the delivery's signature over the exact bytes received, in
// constant time.
func (c *Client) Verify(_ context.Context, h http.Header, body []byte) error {
	got, err := hex.DecodeString(strings.TrimSpace(h.Get(SignatureHeader)))
	if err != nil || len(got) != sha512.Size {
		return ErrBadSignature
	}
	m := hmac.New(sha512.New, []byte(c.key))
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return ErrBadSignature
	}
	return nil
}

// Ack is the answer Paystack expects: any 200; an empty JSON object.
func (c *Client) Ack() (string, []byte) { return "application/json", []byte("{}") }

type event struct {
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

// charge is the data of charge.success, as a dedicated account's inflow
// carries it.
type charge struct {
	ID            objectID `json:"id"`
	Reference     string   `json:"reference"`
	Amount        *kobo    `json:"amount"`
	Currency      string   `json:"currency"`
	Status        string   `json:"status"`
	Channel       string   `json:"channel"`
	PaidAt        string   `json:"paid_at"`
	PaidAtCamel   string   `json:"paidAt"`
	CreatedAt     string   `json:"created_at"`
	Authorization struct {
		Channel                   string `json:"channel"`
		ReceiverBankAccountNumber string `json:"receiver_bank_account_number"`
		ReceiverBank              string `json:"receiver_bank"`
		SenderName                string `json:"sender_name"`
		SenderBank                string `json:"sender_bank"`
		SenderBankAccountNumber   string `json:"sender_bank_account_number"`
		Narration                 string `json:"narration"`
	} `json:"authorization"`
	Customer struct {
		CustomerCode string `json:"customer_code"`
	} `json:"customer"`
}

// dedicatedNUBAN is the channel of a payment into a dedicated account.
const dedicatedNUBAN = "dedicated_nuban"

// Notices reads a verified delivery: transfer.success, transfer.failed and
// transfer.reversed are payout news; charge.success through a dedicated
// account is an inflow; any other event is a notice without payload. The
// key is the event and the object's reference (its id when it has none, a
// hash of the body when it has neither): Paystack's deliveries carry no
// event id.
func (c *Client) Notices(body []byte) ([]rails.Notice, error) {
	var e event
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, errors.New("paystack: webhook body is not a JSON event")
	}
	if e.Event == "" {
		return nil, errors.New("paystack: webhook has no event name")
	}
	var ids struct {
		ID        objectID `json:"id"`
		Reference string   `json:"reference"`
	}
	if len(e.Data) > 0 && string(e.Data) != "null" {
		if err := json.Unmarshal(e.Data, &ids); err != nil {
			return nil, fmt.Errorf("paystack: %s: data does not parse", e.Event)
		}
	}
	id := ids.Reference
	if id == "" {
		id = string(ids.ID)
	}
	n := rails.Notice{Key: e.Event + ":" + id}
	if id == "" {
		// Nothing names the object: the body itself does, so a repeated
		// delivery keeps its key and two different events do not share one.
		sum := sha256.Sum256(body)
		n.Key = e.Event + ":body-" + hex.EncodeToString(sum[:16])
	}
	switch e.Event {
	case "transfer.success", "transfer.failed", "transfer.reversed":
		p, err := c.payoutNotice(e)
		if err != nil {
			return nil, err
		}
		n.Payout = p
	case "charge.success":
		in, err := c.inflowNotice(e)
		if err != nil {
			return nil, err
		}
		n.Inflow = in
	}
	if id == "" && (n.Payout != nil || n.Inflow != nil) {
		return nil, fmt.Errorf("paystack: %s has neither reference nor id", e.Event)
	}
	return []rails.Notice{n}, nil
}

// payoutNotice reads transfer.*; the event, not data.status, says what
// happened.
func (c *Client) payoutNotice(e event) (*rails.PayoutNotice, error) {
	var t transfer
	if err := json.Unmarshal(e.Data, &t); err != nil {
		return nil, fmt.Errorf("paystack: %s: data does not parse: %w", e.Event, err)
	}
	if t.Reference == "" {
		return nil, fmt.Errorf("paystack: %s has no reference", e.Event)
	}
	if t.Amount == nil {
		return nil, fmt.Errorf("paystack: %s %s has no amount", e.Event, t.Reference)
	}
	cur, ok := money.Parse(t.Currency)
	if !ok || !cur.IsFiat() {
		return nil, fmt.Errorf("paystack: %s %s has the unknown currency %q", e.Event, t.Reference, c.caller.Quote(t.Currency, maxQuoted))
	}
	p := &rails.PayoutNotice{ProviderReference: t.Reference, ProviderID: t.TransferCode, Amount: int64(*t.Amount),
		Currency: cur, At: parseTime(t.TransferredAt, t.UpdatedAt, t.UpdatedAtCamel, t.CreatedAt, t.CreatedAtCamel)}
	if p.ProviderID == "" {
		p.ProviderID = string(t.ID)
	}
	switch e.Event {
	case "transfer.success":
		p.Status = rails.PayoutSucceeded
	case "transfer.failed":
		p.Status = rails.PayoutFailed
		if t.Status == "" || t.Status == "success" || t.Status == "pending" {
			t.Status = "failed"
		}
		p.Reason = c.failureReason(t)
	case "transfer.reversed":
		p.Status = rails.PayoutReversed
		t.Status = "reversed"
		p.Reason = c.failureReason(t)
	}
	return p, nil
}

// maxCurrency bounds the currency text an inflow passes on.
const maxCurrency = 16

// inflowNotice reads charge.success; one not through a dedicated account
// is no inflow of ours (nil, no error).
func (c *Client) inflowNotice(e event) (*rails.InflowNotice, error) {
	var ch charge
	if err := json.Unmarshal(e.Data, &ch); err != nil {
		return nil, fmt.Errorf("paystack: %s: data does not parse: %w", e.Event, err)
	}
	if ch.Authorization.Channel != dedicatedNUBAN && ch.Channel != dedicatedNUBAN {
		return nil, nil
	}
	if ch.Reference == "" {
		return nil, fmt.Errorf("paystack: %s has no reference", e.Event)
	}
	if ch.Amount == nil || *ch.Amount <= 0 {
		return nil, fmt.Errorf("paystack: %s %s has no positive amount", e.Event, ch.Reference)
	}
	// A currency other than NGN is passed on as it is, not refused: the
	// money did arrive, and the service records such an inflow for an
	// operator (refusing the delivery would only have Paystack deliver it
	// again and again).
	if ch.Status != "" && ch.Status != "success" {
		return nil, fmt.Errorf("paystack: %s %s has status %q", e.Event, ch.Reference, c.caller.Quote(ch.Status, maxQuoted))
	}
	au := ch.Authorization
	return &rails.InflowNotice{ProviderReference: ch.Reference, AccountNumber: au.ReceiverBankAccountNumber,
		CustomerCode: ch.Customer.CustomerCode, Amount: int64(*ch.Amount), Currency: money.Currency(c.caller.Quote(ch.Currency, maxCurrency)),
		Narration: au.Narration, SenderName: au.SenderName, SenderBank: au.SenderBank,
		SenderAccount: au.SenderBankAccountNumber, PaidAt: parseTime(ch.PaidAt, ch.PaidAtCamel, ch.CreatedAt)}, nil
}
