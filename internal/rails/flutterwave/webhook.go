package flutterwave

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"merchantpay/internal/money"
	"merchantpay/internal/rails"
)

// Webhook headers: v3 sends the dashboard's secret hash as it is; newer
// deliveries are reported to carry an HMAC of the body under it instead.
const (
	HeaderVerifHash = "verif-hash"
	HeaderSignature = "flutterwave-signature"
)

// ErrBadSignature is Verify's answer to a delivery that does not carry the
// secret hash or a valid signature under it.
var ErrBadSignature = errors.New("flutterwave: webhook not authenticated")

// EventTransferCompleted is the webhook event of a transfer's outcome.
const EventTransferCompleted = "transfer.completed"

// Verify accepts a delivery whose verif-hash header equals the configured
// secret hash, or whose flutterwave-signature header is the base64
// HMAC-SHA256 of the raw body under that hash. It compares in constant
// time and reads nothing of the body otherwise.
func (c *Client) Verify(_ context.Context, h http.Header, body []byte) error {
	if got := h.Get(HeaderVerifHash); got != "" {
		a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(c.webhookHash))
		if subtle.ConstantTimeCompare(a[:], b[:]) == 1 {
			return nil
		}
	}
	if got := h.Get(HeaderSignature); got != "" {
		sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(got))
		if err == nil && hmac.Equal(sig, Signature(c.webhookHash, body)) {
			return nil
		}
	}
	return ErrBadSignature
}

// Signature is HMAC-SHA256 of body under the secret hash, the raw bytes
// that flutterwave-signature carries in base64.
func Signature(secretHash string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secretHash))
	m.Write(body)
	return m.Sum(nil)
}

// webhookBody is a v3 delivery as far as we read it.
type webhookBody struct {
	Event string   `json:"event"`
	Data  transfer `json:"data"`
}

// Notices reads a verified delivery. transfer.completed gives a payout
// notice keyed by the event, Flutterwave's transfer id and the status, so a
// repeated delivery has the same key; any other event gives one notice
// with only its key, for the service to acknowledge.
func (c *Client) Notices(body []byte) ([]rails.Notice, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var w webhookBody
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("flutterwave: the webhook does not parse: %w", err)
	}
	if w.Event == "" {
		return nil, errors.New("flutterwave: the webhook names no event")
	}
	t := w.Data
	if w.Event != EventTransferCompleted {
		return []rails.Notice{{Key: w.Event + ":" + t.ID.String()}}, nil
	}
	if t.ID == "" || t.Reference == "" {
		return nil, errors.New("flutterwave: transfer.completed without data.id or data.reference")
	}
	// Flutterwave tells no completion time; At stays zero for the service
	// to stamp with its own clock.
	n := &rails.PayoutNotice{ProviderReference: t.Reference, ProviderID: t.ID.String(),
		Currency: money.Currency(t.Currency)}
	switch strings.ToUpper(t.Status) {
	case "SUCCESSFUL":
		n.Status = rails.PayoutSucceeded
	case "FAILED":
		n.Status = rails.PayoutFailed
		n.Reason = c.failureReason(t.CompleteMessage)
	default:
		return nil, fmt.Errorf("flutterwave: transfer.completed with status %q", t.Status)
	}
	if _, ok := money.Parse(t.Currency); !ok {
		return nil, fmt.Errorf("flutterwave: transfer.completed in currency %q", t.Currency)
	}
	amt, err := minorAmount(t.Amount, n.Currency)
	if err != nil {
		return nil, err
	}
	n.Amount = amt
	key := EventTransferCompleted + ":" + t.ID.String() + ":" + strings.ToUpper(t.Status)
	return []rails.Notice{{Key: key, Payout: n}}, nil
}

// Ack is the answer Flutterwave expects: any 200.
func (c *Client) Ack() (string, []byte) {
	return "application/json", []byte(`{"status":"success"}`)
}
