package flutterwave

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/providerhttp"
)

// Field limits of a transfer at Flutterwave.
const (
	maxNarration   = 100
	maxName        = 100
	maxBranchCode  = 10
	maxAccountNumb = 20
)

var plainReference = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// ProviderReference is the reference a payout is submitted to Flutterwave
// under: ours as it is when it is made of letters, digits, '-' and '_' and
// fits Flutterwave's 100 characters (WTH-<uuid> does), else "mp-" and a hash
// of ours. It is deterministic, so a retry after a timeout finds the first
// submission.
func ProviderReference(ourRef string) string {
	if plainReference.MatchString(ourRef) {
		return ourRef
	}
	sum := sha256.Sum256([]byte(ourRef))
	return "mp-" + hex.EncodeToString(sum[:20])
}

// transfer is Flutterwave's transfer object, as far as we read it.
type transfer struct {
	ID              json.Number `json:"id"`
	Reference       string      `json:"reference"`
	Status          string      `json:"status"`
	Amount          json.Number `json:"amount"`
	Currency        string      `json:"currency"`
	CompleteMessage string      `json:"complete_message"`
}

// transferRequest is the body of POST /v3/transfers.
type transferRequest struct {
	AccountBank           string      `json:"account_bank"`
	AccountNumber         string      `json:"account_number"`
	Amount                json.Number `json:"amount"`
	Currency              string      `json:"currency"`
	Narration             string      `json:"narration,omitempty"`
	Reference             string      `json:"reference"`
	DestinationBranchCode string      `json:"destination_branch_code,omitempty"`
	BeneficiaryName       string      `json:"beneficiary_name,omitempty"`
}

// MajorAmount writes minor units of c as the exact decimal number of major
// units Flutterwave takes (1234 pesewas is 12.34), built from the integer
// so that no float rounding can creep in.
func MajorAmount(minor int64, c money.Currency) json.Number {
	return json.Number(money.Format(minor, c))
}

// minorAmount reads Flutterwave's major-unit number back into minor units,
// exactly; an amount off the currency's grid is an error.
func minorAmount(n json.Number, c money.Currency) (int64, error) {
	d, err := money.ParseJSONNumber(json.RawMessage(n))
	if err != nil {
		return 0, fmt.Errorf("flutterwave: amount %q: %w", string(n), err)
	}
	m, err := money.ToMinor(d, c)
	if err != nil {
		return 0, fmt.Errorf("flutterwave: amount %q in %s: %w", string(n), c, err)
	}
	return m, nil
}

// SubmitPayout looks the payout up by its provider reference and submits it
// only when Flutterwave has no record of it, so calling it again after a
// timeout, a 5xx or a crash never pays twice. A refusal by Flutterwave is
// looked up once more (a duplicate reference means the first try landed)
// and, with still no record, answered PayoutFailed with its message.
func (c *Client) SubmitPayout(ctx context.Context, p rails.Payout) (rails.PayoutResult, error) {
	req, err := buildTransfer(p)
	if err != nil {
		return rails.PayoutResult{}, err
	}
	if t, err := c.findByReference(ctx, req.Reference); err == nil {
		return c.result(t, p.Currency)
	} else if !errors.Is(err, rails.ErrNoRecord) {
		return rails.PayoutResult{}, err
	}
	var created transfer
	err = c.call(ctx, "POST", "/v3/transfers", req, &created)
	var refused *apiError
	if errors.As(err, &refused) && refused.HTTPStatus != 401 && refused.HTTPStatus != 403 {
		t, lerr := c.findByReference(ctx, req.Reference)
		switch {
		case lerr == nil:
			return c.result(t, p.Currency)
		case errors.Is(lerr, rails.ErrNoRecord):
			return rails.PayoutResult{Status: rails.PayoutFailed,
				Reason: "Flutterwave refused the transfer: " + refused.Message}, nil
		default:
			return rails.PayoutResult{}, lerr
		}
	}
	if err != nil {
		return rails.PayoutResult{}, err
	}
	if created.Reference != "" && created.Reference != req.Reference {
		return rails.PayoutResult{}, fmt.Errorf("%w: flutterwave answered the transfer %s with reference %q",
			rails.ErrOutcomeUnknown, req.Reference, created.Reference)
	}
	return c.result(created, p.Currency)
}

// CheckPayout looks a payout up: by Flutterwave's id when RailsReference
// holds it, else by the provider reference. rails.ErrNoRecord when
// Flutterwave knows no transfer under the reference.
func (c *Client) CheckPayout(ctx context.Context, q rails.PayoutQuery) (rails.PayoutResult, error) {
	ref := ProviderReference(q.Payout.Reference)
	if id := q.RailsReference; id != "" && isDigits(id) {
		var t transfer
		err := c.call(ctx, "GET", "/v3/transfers/"+id, nil, &t)
		if err == nil {
			if q.Payout.Reference != "" && t.Reference != ref {
				return rails.PayoutResult{}, fmt.Errorf("flutterwave: transfer %s has reference %q, not %q", id, t.Reference, ref)
			}
			return c.result(t, q.Payout.Currency)
		}
		var refused *apiError
		if !errors.As(err, &refused) || refused.HTTPStatus != 404 || q.Payout.Reference == "" {
			return rails.PayoutResult{}, err
		}
	}
	if q.Payout.Reference == "" {
		return rails.PayoutResult{}, errors.New("flutterwave: a look-up needs the payout's reference or Flutterwave's id")
	}
	t, err := c.findByReference(ctx, ref)
	if err != nil {
		return rails.PayoutResult{}, err
	}
	return c.result(t, q.Payout.Currency)
}

// findByReference lists the transfers under ref; rails.ErrNoRecord when
// there is none.
func (c *Client) findByReference(ctx context.Context, ref string) (transfer, error) {
	var list []transfer
	if err := c.call(ctx, "GET", "/v3/transfers?reference="+url.QueryEscape(ref), nil, &list); err != nil {
		return transfer{}, err
	}
	var found []transfer
	for _, t := range list {
		if t.Reference == ref {
			found = append(found, t)
		}
	}
	switch {
	case len(found) == 0 && len(list) > 0:
		// Transfers under other references mean the filter was not
		// applied: the list proves nothing about ours, and submitting on
		// it could pay twice.
		return transfer{}, fmt.Errorf("%w: flutterwave listed %d transfers, none under reference %s",
			rails.ErrOutcomeUnknown, len(list), ref)
	case len(found) == 0:
		return transfer{}, fmt.Errorf("flutterwave: reference %s: %w", ref, rails.ErrNoRecord)
	case len(found) == 1:
		return found[0], nil
	}
	return transfer{}, fmt.Errorf("flutterwave: %d transfers under reference %s", len(found), ref)
}

// result maps a transfer to the service's statuses.
func (c *Client) result(t transfer, cur money.Currency) (rails.PayoutResult, error) {
	if t.Currency != "" && cur != "" && t.Currency != string(cur) {
		return rails.PayoutResult{}, fmt.Errorf("flutterwave: transfer %s is in %s, the payout in %s", t.ID, t.Currency, cur)
	}
	if cur == "" {
		cur = money.Currency(t.Currency)
	}
	res := rails.PayoutResult{RailsReference: t.ID.String()}
	if t.Amount != "" {
		amt, err := minorAmount(t.Amount, cur)
		if err != nil {
			return rails.PayoutResult{}, err
		}
		res.ProviderAmount = amt
	}
	now := c.Clock.Now()
	switch strings.ToUpper(t.Status) {
	case "NEW", "PENDING":
		res.Status = rails.PayoutPending
		res.NextCheck = now.Add(c.Recheck)
	case "SUCCESSFUL":
		res.Status = rails.PayoutSucceeded
		res.SettledAt = now
	case "FAILED":
		res.Status = rails.PayoutFailed
		res.Reason = c.failureReason(t.CompleteMessage)
	default:
		return rails.PayoutResult{}, fmt.Errorf("%w: flutterwave transfer %s has status %q",
			rails.ErrOutcomeUnknown, t.ID, t.Status)
	}
	return res, nil
}

// failureReason is Flutterwave's complete_message, quoted, or a plain
// sentence when it gives none.
func (c *Client) failureReason(msg string) string {
	if msg = c.caller.Quote(msg, maxQuoted); msg != "" {
		return msg
	}
	return "Flutterwave reported the transfer failed"
}

// buildTransfer checks a payout and writes Flutterwave's request for it;
// every bad field is named in one validation error and nothing is sent.
func buildTransfer(p rails.Payout) (transferRequest, error) {
	var bad []apperr.FieldError
	add := func(field, msg string) { bad = append(bad, apperr.FieldError{Field: field, Message: msg}) }
	if p.Reference == "" {
		add("reference", "is required")
	}
	if p.Currency != money.GHS && p.Currency != money.NGN {
		add("currency", "must be GHS or NGN")
	}
	if p.Amount <= 0 {
		add("amount", "must be positive")
	}
	if p.BankCode == "" {
		add("bank_code", "is required")
	}
	if p.AccountNumber == "" || len(p.AccountNumber) > maxAccountNumb {
		add("account_number", fmt.Sprintf("must have 1 to %d characters", maxAccountNumb))
	}
	switch p.Country {
	case banks.CountryGH:
		if p.BranchCode == "" || len(p.BranchCode) > maxBranchCode {
			add("branch_code", fmt.Sprintf("is required for Ghana, at most %d characters", maxBranchCode))
		}
	case banks.CountryNG:
	default:
		add("country", "must be GH or NG")
	}
	if len(bad) > 0 {
		return transferRequest{}, &apperr.Error{Kind: apperr.Validation,
			Message: "the payout cannot be sent to Flutterwave", Fields: bad}
	}
	req := transferRequest{
		AccountBank:     p.BankCode,
		AccountNumber:   p.AccountNumber,
		Amount:          MajorAmount(p.Amount, p.Currency),
		Currency:        string(p.Currency),
		Narration:       providerhttp.Clip(p.Narration, maxNarration),
		Reference:       ProviderReference(p.Reference),
		BeneficiaryName: providerhttp.Clip(p.AccountName, maxName),
	}
	if p.Country == banks.CountryGH {
		req.DestinationBranchCode = p.BranchCode
	}
	return req, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
