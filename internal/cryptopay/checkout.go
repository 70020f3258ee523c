package cryptopay

import (
	"context"
	"net/url"
	"strings"
	"time"

	"rsc.io/qr"

	"merchantpay/ent"
	"merchantpay/internal/money"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// States of a checkout as the hosted page shows it.
const (
	StateOpen      = "open"      // pending and payable
	StateExpired   = "expired"   // past expireTime (pending until the worker runs, or failed)
	StatePaid      = "paid"      // success
	StateCancelled = "cancelled" // failed by the payer
	StateFailed    = "failed"    // failed otherwise
)

// Checkout is what the hosted page shows of a deposit.
type Checkout struct {
	PrepayID           string
	Reference          string
	BusinessName       string
	ProductName        string
	ProductDescription string
	// Amount and Currency are what the payer pays: amount_charged of a
	// direct deposit, the quote's from_amount of a cross one.
	Amount   string
	Currency string
	// Credited and CreditedCurrency are what the merchant receives.
	Credited         string
	CreditedCurrency string
	ExpiresAt        time.Time
	// Left is the time until expiry (zero once expired).
	Left       time.Duration
	State      string
	QRContent  string
	QRCodeLink string
	SuccessURL string
	FailureURL string
}

// Checkout reads the checkout of a prepay id for the hosted page, which has
// no API key: the prepay id is the credential. NOT_FOUND when unknown.
func (s *Service) Checkout(ctx context.Context, prepayID string) (*Checkout, error) {
	t, err := s.find(tenant.System(ctx), s.db.Reader(), prepayID)
	if err != nil {
		return nil, store.Classify(err)
	}
	return s.CheckoutOf(t)
}

// CheckoutOf is the page's view of deposit t, now.
func (s *Service) CheckoutOf(t *ent.Transaction) (*Checkout, error) {
	st, err := storedOf(t)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	c := &Checkout{
		PrepayID: deref(t.PrepayID), Reference: t.Reference, BusinessName: st.BusinessName,
		ProductName: st.ProductName, ProductDescription: st.ProductDescription,
		Amount:   money.Format(t.FromAmount, money.Currency(t.FromCurrency)),
		Currency: t.FromCurrency,
		Credited: money.Format(t.AmountSettled, money.Currency(t.Currency)), CreditedCurrency: t.Currency,
		QRContent: st.QRContent, QRCodeLink: st.QRCodeLink,
		SuccessURL: st.SuccessURL, FailureURL: st.FailureURL,
	}
	if t.ExpiresAt != nil {
		c.ExpiresAt = *t.ExpiresAt
		if left := t.ExpiresAt.Sub(now); left > 0 {
			c.Left = left
		}
	}
	switch {
	case t.Status == StatusSuccess:
		c.State = StatePaid
	case t.Status == StatusFailed && deref(t.RejectReason) == RejectCancelled:
		c.State = StateCancelled
	case t.Status == StatusFailed && strings.HasPrefix(deref(t.RejectReason), rejectExpiredPrefix):
		c.State = StateExpired
	case t.Status == StatusFailed:
		c.State = StateFailed
	case expired(t, now):
		c.State = StateExpired
	default:
		c.State = StateOpen
	}
	return c, nil
}

// Redirect is where the payer goes after completing t: its success_url or
// failure_url, with prepay_id, reference and status added to the query so
// the merchant's page knows which payment returned; "" when t has none.
func Redirect(t *ent.Transaction) string {
	st, err := storedOf(t)
	if err != nil {
		return ""
	}
	target := st.FailureURL
	if t.Status == StatusSuccess {
		target = st.SuccessURL
	}
	u, err := url.Parse(target)
	if target == "" || err != nil {
		return ""
	}
	q := u.Query()
	q.Set("prepay_id", deref(t.PrepayID))
	q.Set("reference", st.MerchantReference)
	q.Set("status", t.Status)
	u.RawQuery = q.Encode()
	return u.String()
}

// QRCode renders content as a QR code PNG (error correction level M).
func QRCode(content string) ([]byte, error) {
	c, err := qr.Encode(content, qr.M)
	if err != nil {
		return nil, err
	}
	return c.PNG(), nil
}

// QRPNG is the QR code PNG of the checkout prepayID's qrContent.
func (s *Service) QRPNG(ctx context.Context, prepayID string) ([]byte, error) {
	c, err := s.Checkout(ctx, prepayID)
	if err != nil {
		return nil, err
	}
	return QRCode(c.QRContent)
}
