package paystack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"merchantpay/internal/banks"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
)

// transfer is Paystack's transfer object, as POST /transfer, GET
// /transfer/verify/:reference and the transfer.* webhooks carry it.
type transfer struct {
	ID              objectID `json:"id"`
	TransferCode    string   `json:"transfer_code"`
	Reference       string   `json:"reference"`
	Amount          *kobo    `json:"amount"`
	Currency        string   `json:"currency"`
	Status          string   `json:"status"`
	GatewayResponse string   `json:"gateway_response"`
	TransferredAt   string   `json:"transferred_at"`
	UpdatedAt       string   `json:"updated_at"`
	UpdatedAtCamel  string   `json:"updatedAt"`
	CreatedAt       string   `json:"created_at"`
	CreatedAtCamel  string   `json:"createdAt"`
}

// payoutStatus maps Paystack's transfer statuses: pending, otp and received
// are in progress; success is paid; failed, abandoned (OTP never entered),
// blocked and rejected never paid; reversed came back after paying.
func payoutStatus(s string) (rails.PayoutStatus, bool) {
	switch s {
	case "pending", "otp", "received":
		return rails.PayoutPending, true
	case "success":
		return rails.PayoutSucceeded, true
	case "failed", "abandoned", "blocked", "rejected":
		return rails.PayoutFailed, true
	case "reversed":
		return rails.PayoutReversed, true
	}
	return "", false
}

// failureReason says, safe to show, why a transfer did not pay.
func (c *Client) failureReason(t transfer) string {
	var r string
	switch t.Status {
	case "abandoned":
		r = "Paystack abandoned the transfer (it was never confirmed)"
	case "reversed":
		r = "Paystack reversed the transfer: the money came back from the beneficiary's bank"
	default:
		r = "Paystack reports the transfer " + t.Status
	}
	if g := c.caller.Quote(t.GatewayResponse, maxQuoted); g != "" {
		r += ": " + g
	}
	return r
}

// result turns a transfer Paystack reported into our answer; a transfer we
// cannot read for certain is an unknown outcome.
func (c *Client) result(op, ref string, t transfer) (rails.PayoutResult, error) {
	st, ok := payoutStatus(t.Status)
	if !ok {
		return rails.PayoutResult{}, c.unknown(op, "/transfer", fmt.Sprintf("transfer %s has the unknown status %q", ref, c.caller.Quote(t.Status, maxQuoted)))
	}
	if t.Reference != "" && t.Reference != ref {
		return rails.PayoutResult{}, c.unknown(op, "/transfer", fmt.Sprintf("asked for transfer %s, Paystack answered with %s", ref, c.caller.Quote(t.Reference, maxQuoted)))
	}
	if t.Currency != string(money.NGN) {
		return rails.PayoutResult{}, fmt.Errorf("paystack: transfer %s is in %q, not NGN: %w", ref, c.caller.Quote(t.Currency, maxQuoted), rails.ErrOutcomeUnknown)
	}
	if t.Amount == nil {
		return rails.PayoutResult{}, c.unknown(op, "/transfer", "transfer "+ref+" has no amount")
	}
	res := rails.PayoutResult{Status: st, RailsReference: ref, ProviderAmount: int64(*t.Amount)}
	switch st {
	case rails.PayoutPending:
		res.NextCheck = c.clock.Now().Add(c.pollInterval)
	case rails.PayoutSucceeded:
		res.SettledAt = parseTime(t.TransferredAt, t.UpdatedAt, t.UpdatedAtCamel)
		if res.SettledAt.IsZero() {
			res.SettledAt = c.clock.Now()
		}
	default:
		res.Reason = c.failureReason(t)
	}
	return res, nil
}

// lookup is GET /transfer/verify/:reference. A 404 refusal means Paystack
// has no transfer under ref: an error wrapping rails.ErrNoRecord.
func (c *Client) lookup(ctx context.Context, ref string) (transfer, error) {
	if !ValidReference(ref) {
		return transfer{}, fmt.Errorf("paystack: %q is not a Paystack transfer reference", ref)
	}
	path := "/transfer/verify/" + url.PathEscape(ref)
	a, err := c.call(ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return transfer{}, err
	}
	if a.refused() {
		if a.httpStatus == http.StatusNotFound {
			return transfer{}, fmt.Errorf("paystack: transfer %s: %w", ref, rails.ErrNoRecord)
		}
		return transfer{}, c.refusal(http.MethodGet, path, a)
	}
	var t transfer
	if err := c.decodeData(http.MethodGet, path, a, &t); err != nil {
		return transfer{}, err
	}
	return t, nil
}

// CheckPayout looks the payout up by its Paystack reference (the stored
// RailsReference, or the one derived from the payout's reference).
func (c *Client) CheckPayout(ctx context.Context, q rails.PayoutQuery) (rails.PayoutResult, error) {
	ref := q.RailsReference
	if ref == "" {
		ref = ProviderReference(q.Payout.Reference)
	}
	t, err := c.lookup(ctx, ref)
	if err != nil {
		return rails.PayoutResult{}, err
	}
	return c.result(http.MethodGet, ref, t)
}

// SubmitPayout pays an NGN payout out through Paystack: it looks the
// transfer up first and, only when Paystack has no record of it, creates
// the `nuban` recipient (Paystack returns the existing one for a known
// account) and the transfer from the balance under the derived reference.
// A refusal of the beneficiary or of the transfer is PayoutFailed with a
// reason safe to show; a refused transfer is looked up again first, so a
// transfer that exists after all is never reported failed.
func (c *Client) SubmitPayout(ctx context.Context, p rails.Payout) (rails.PayoutResult, error) {
	if err := checkPayout(p); err != nil {
		return rails.PayoutResult{}, err
	}
	ref := ProviderReference(p.Reference)
	t, err := c.lookup(ctx, ref)
	if err == nil {
		return c.result(http.MethodGet, ref, t)
	}
	if !errors.Is(err, rails.ErrNoRecord) {
		return rails.PayoutResult{}, err
	}
	recipient, failed, err := c.createRecipient(ctx, p)
	if err != nil {
		return rails.PayoutResult{}, err
	}
	if failed != "" {
		return rails.PayoutResult{Status: rails.PayoutFailed, RailsReference: ref, Reason: failed}, nil
	}
	return c.createTransfer(ctx, p, ref, recipient)
}

// checkPayout refuses, before any call, a payout this adapter cannot carry.
func checkPayout(p rails.Payout) error {
	var bad []string
	if p.Reference == "" {
		bad = append(bad, "reference is empty")
	}
	if p.Country != banks.CountryNG {
		bad = append(bad, "country "+p.Country+" is not NG")
	}
	if p.Currency != money.NGN {
		bad = append(bad, "currency "+string(p.Currency)+" is not NGN")
	}
	if p.Amount <= 0 {
		bad = append(bad, "amount is not positive")
	}
	if !banks.IsAccountNumber(p.AccountNumber) {
		bad = append(bad, "account number is not 10 digits")
	}
	if p.BankCode == "" {
		bad = append(bad, "bank code is empty")
	}
	if strings.TrimSpace(p.AccountName) == "" {
		bad = append(bad, "account name is empty")
	}
	if len(bad) > 0 {
		return fmt.Errorf("paystack: payout %s cannot be sent: %s", p.Reference, strings.Join(bad, "; "))
	}
	return nil
}

type recipientRequest struct {
	Type          string `json:"type"`
	Name          string `json:"name"`
	AccountNumber string `json:"account_number"`
	BankCode      string `json:"bank_code"`
	Currency      string `json:"currency"`
}

type recipientData struct {
	RecipientCode string `json:"recipient_code"`
}

// createRecipient is POST /transferrecipient. A refusal (the account or
// bank is wrong) comes back as failed, the reason to show.
func (c *Client) createRecipient(ctx context.Context, p rails.Payout) (code, failed string, err error) {
	const path = "/transferrecipient"
	a, err := c.call(ctx, http.MethodPost, path, nil, recipientRequest{Type: "nuban", Name: p.AccountName,
		AccountNumber: p.AccountNumber, BankCode: p.BankCode, Currency: string(money.NGN)})
	if err != nil {
		return "", "", err
	}
	if a.refused() {
		if a.httpStatus == http.StatusUnauthorized || a.httpStatus == http.StatusForbidden {
			return "", "", c.refusal(http.MethodPost, path, a)
		}
		return "", "Paystack refused the beneficiary account: " + c.caller.Quote(a.env.Message, maxQuoted), nil
	}
	var d recipientData
	if err := c.decodeData(http.MethodPost, path, a, &d); err != nil {
		return "", "", err
	}
	if d.RecipientCode == "" {
		return "", "", c.unknown(http.MethodPost, path, "the recipient has no recipient_code")
	}
	return d.RecipientCode, "", nil
}

type transferRequest struct {
	Source    string `json:"source"`
	Amount    int64  `json:"amount"`
	Recipient string `json:"recipient"`
	Reference string `json:"reference"`
	Reason    string `json:"reason,omitempty"`
	Currency  string `json:"currency"`
}

// createTransfer is POST /transfer.
func (c *Client) createTransfer(ctx context.Context, p rails.Payout, ref, recipient string) (rails.PayoutResult, error) {
	const path = "/transfer"
	a, err := c.call(ctx, http.MethodPost, path, nil, transferRequest{Source: "balance", Amount: p.Amount,
		Recipient: recipient, Reference: ref, Reason: p.Narration, Currency: string(money.NGN)})
	if err != nil {
		return rails.PayoutResult{}, err
	}
	if a.refused() {
		if a.httpStatus == http.StatusUnauthorized || a.httpStatus == http.StatusForbidden {
			return rails.PayoutResult{}, c.refusal(http.MethodPost, path, a)
		}
		// A refusal may be Paystack's answer to a reference it already
		// holds (a race with another attempt): only its absence proves
		// that nothing was sent.
		t, err := c.lookup(ctx, ref)
		if err == nil {
			return c.result(http.MethodGet, ref, t)
		}
		if !errors.Is(err, rails.ErrNoRecord) {
			return rails.PayoutResult{}, err
		}
		return rails.PayoutResult{Status: rails.PayoutFailed, RailsReference: ref,
			Reason: "Paystack refused the transfer: " + c.caller.Quote(a.env.Message, maxQuoted)}, nil
	}
	var t transfer
	if err := c.decodeData(http.MethodPost, path, a, &t); err != nil {
		return rails.PayoutResult{}, err
	}
	return c.result(http.MethodPost, ref, t)
}
