package binancepay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/providerhttp"
)

// Binance Pay's paths under the base URL.
const (
	pathCreateOrder  = "/binancepay/openapi/v3/order"
	pathQueryOrder   = "/binancepay/openapi/v2/order/query"
	pathCloseOrder   = "/binancepay/openapi/order/close"
	pathCertificates = "/binancepay/openapi/certificates"
)

const (
	maxTradeNo     = 32
	maxDescription = 256
	maxURL         = 256
	maxDecimals    = 8
)

var (
	tradeNoPattern = regexp.MustCompile(`^[A-Za-z0-9]{1,32}$`)
	tickerPattern  = regexp.MustCompile(`^[A-Z0-9]{2,10}$`)
)

// TradeNo is the merchantTradeNo an order is created under, derived from
// our reference: the reference itself when it is letters and digits only
// and at most 32 long; else its leading letters (at most 3) followed by
// upper-case hex of its SHA-256, 32 characters in all (DEP-<uuid> becomes
// DEP and 29 hex digits). Deterministic, so a look-up after a timeout finds
// the order.
func TradeNo(ourRef string) string {
	if tradeNoPattern.MatchString(ourRef) {
		return ourRef
	}
	prefix := ""
	for i := 0; i < len(ourRef) && i < 3; i++ {
		ch := ourRef[i]
		if !('A' <= ch && ch <= 'Z' || 'a' <= ch && ch <= 'z') {
			break
		}
		prefix += string(ch)
	}
	sum := sha256.Sum256([]byte(ourRef))
	return prefix + strings.ToUpper(hex.EncodeToString(sum[:]))[:maxTradeNo-len(prefix)]
}

type orderRequest struct {
	Env             terminal `json:"env"`
	MerchantTradeNo string   `json:"merchantTradeNo"`
	// One pair is sent: orderAmount and currency for an order in a
	// crypto asset, fiatAmount and fiatCurrency for one priced in fiat.
	OrderAmount     json.Number `json:"orderAmount,omitempty"`
	Currency        string      `json:"currency,omitempty"`
	FiatAmount      json.Number `json:"fiatAmount,omitempty"`
	FiatCurrency    string      `json:"fiatCurrency,omitempty"`
	Description     string      `json:"description"`
	GoodsDetails    []goods     `json:"goodsDetails"`
	OrderExpireTime int64       `json:"orderExpireTime,omitempty"`
	WebhookURL      string      `json:"webhookUrl,omitempty"`
	ReturnURL       string      `json:"returnUrl,omitempty"`
	CancelURL       string      `json:"cancelUrl,omitempty"`
}

type terminal struct {
	TerminalType string `json:"terminalType"`
}

type goods struct {
	GoodsType        string `json:"goodsType"`
	GoodsCategory    string `json:"goodsCategory"`
	ReferenceGoodsID string `json:"referenceGoodsId"`
	GoodsName        string `json:"goodsName"`
}

type orderCreated struct {
	PrepayID     flexString `json:"prepayId"`
	ExpireTime   flexString `json:"expireTime"`
	QRCodeLink   string     `json:"qrcodeLink"`
	QRContent    string     `json:"qrContent"`
	CheckoutURL  string     `json:"checkoutUrl"`
	Deeplink     string     `json:"deeplink"`
	UniversalURL string     `json:"universalUrl"`
}

// CreateOrder opens a checkout at Binance Pay (order v3, terminal WEB) under
// the trade number derived from o.Reference. ErrDuplicateTradeNo when one
// exists already; an error wrapping rails.ErrOutcomeUnknown when the answer
// was lost (QueryOrder tells whether the order exists).
func (c *Client) CreateOrder(ctx context.Context, o rails.CryptoOrder) (rails.CryptoOrderCreated, error) {
	req, err := buildOrder(o)
	if err != nil {
		return rails.CryptoOrderCreated{}, err
	}
	var data orderCreated
	if err := c.post(ctx, pathCreateOrder, req, &data); err != nil {
		if codeOf(err) == CodeDuplicateTradeNo {
			return rails.CryptoOrderCreated{}, fmt.Errorf("%w: %s (%v)", ErrDuplicateTradeNo, req.MerchantTradeNo, err)
		}
		return rails.CryptoOrderCreated{}, err
	}
	if data.PrepayID == "" {
		return rails.CryptoOrderCreated{}, fmt.Errorf("%w: binancepay created order %s without a prepayId",
			rails.ErrOutcomeUnknown, req.MerchantTradeNo)
	}
	out := rails.CryptoOrderCreated{ProviderReference: string(data.PrepayID), TradeNo: req.MerchantTradeNo,
		CheckoutURL: data.CheckoutURL, QRContent: data.QRContent, QRCodeLink: data.QRCodeLink,
		Deeplink: data.Deeplink, UniversalURL: data.UniversalURL}
	if ms, err := strconv.ParseInt(string(data.ExpireTime), 10, 64); err == nil && ms > 0 {
		out.ExpiresAt = time.UnixMilli(ms).UTC()
	}
	return out, nil
}

// FiatOrderCurrency is the currency of an order priced in fiat: Binance
// documents that fiatAmount and fiatCurrency set the order's currency to
// USDT, so its query and webhook report the order in USDT.
const FiatOrderCurrency = rails.FiatOrderCurrency

// buildOrder checks an order and writes Binance's request for it; every bad
// field is named in one validation error and nothing is sent. An order in a
// crypto asset is sent as orderAmount and currency; one in a fiat currency
// (a direct deposit in NGN or USD, a cross deposit paid in NGN) as
// fiatAmount and fiatCurrency.
func buildOrder(o rails.CryptoOrder) (orderRequest, error) {
	var bad []apperr.FieldError
	add := func(field, msg string) { bad = append(bad, apperr.FieldError{Field: field, Message: msg}) }
	if o.Reference == "" {
		add("reference", "is required")
	}
	amount, err := decimalText(o.Amount)
	if err != nil || !amount.IsPositive() || amount.Exponent() < -maxDecimals && !amount.Equal(amount.Truncate(maxDecimals)) {
		add("amount", "must be a positive decimal with at most 8 decimal places")
	}
	fiat := false
	if !tickerPattern.MatchString(o.Currency) {
		add("currency", "must be an upper-case crypto ticker or fiat currency code")
	} else if c, ok := money.Parse(o.Currency); ok && c.IsFiat() {
		fiat = true
	}
	for _, u := range [...]struct{ field, url string }{
		{"webhook_url", o.WebhookURL}, {"return_url", o.ReturnURL}, {"cancel_url", o.CancelURL}} {
		if u.url != "" && !httpURL(u.url) {
			add(u.field, fmt.Sprintf("must be an http(s) URL of at most %d characters", maxURL))
		}
	}
	if len(bad) > 0 {
		return orderRequest{}, &apperr.Error{Kind: apperr.Validation,
			Message: "the order cannot be sent to Binance Pay", Fields: bad}
	}
	desc := providerhttp.Clip(o.Description, maxDescription)
	if desc == "" {
		desc = "Payment " + providerhttp.Clip(o.Reference, maxDescription-8)
	}
	tradeNo := TradeNo(o.Reference)
	req := orderRequest{
		Env:             terminal{TerminalType: "WEB"},
		MerchantTradeNo: tradeNo,
		Description:     desc,
		GoodsDetails: []goods{{GoodsType: "02", GoodsCategory: "Z000",
			ReferenceGoodsID: tradeNo, GoodsName: desc}},
		WebhookURL: o.WebhookURL,
		ReturnURL:  o.ReturnURL,
		CancelURL:  o.CancelURL,
	}
	if fiat {
		// Binance takes no fiat ticker as an order's currency; a fiat
		// amount makes the order one in FiatOrderCurrency, which Binance
		// converts the amount into.
		req.FiatAmount, req.FiatCurrency = json.Number(amount.String()), o.Currency
	} else {
		req.OrderAmount, req.Currency = json.Number(amount.String()), o.Currency
	}
	if !o.ExpiresAt.IsZero() {
		req.OrderExpireTime = o.ExpiresAt.UnixMilli()
	}
	return req, nil
}

// decimalText reads exact decimal text (the JSON number grammar, which
// has no float rounding to fear).
func decimalText(s string) (decimal.Decimal, error) {
	return money.ParseJSONNumber(json.RawMessage(s))
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && len(s) <= maxURL && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

type tradeNoBody struct {
	MerchantTradeNo string `json:"merchantTradeNo"`
}

type orderQueried struct {
	PrepayID        flexString `json:"prepayId"`
	TransactionID   flexString `json:"transactionId"`
	MerchantTradeNo string     `json:"merchantTradeNo"`
	Status          string     `json:"status"`
	Currency        string     `json:"currency"`
	OrderAmount     flexString `json:"orderAmount"`
	TransactTime    flexString `json:"transactTime"`
}

// QueryOrder tells where the order under our reference stands.
// rails.ErrNoRecord when Binance has no such order.
func (c *Client) QueryOrder(ctx context.Context, reference string) (rails.CryptoOrderStatus, error) {
	tradeNo := TradeNo(reference)
	var q orderQueried
	if err := c.post(ctx, pathQueryOrder, tradeNoBody{tradeNo}, &q); err != nil {
		if codeOf(err) == CodeOrderNotFound {
			return rails.CryptoOrderStatus{}, fmt.Errorf("binancepay: order %s: %w", tradeNo, rails.ErrNoRecord)
		}
		return rails.CryptoOrderStatus{}, err
	}
	if q.MerchantTradeNo != "" && q.MerchantTradeNo != tradeNo {
		return rails.CryptoOrderStatus{}, fmt.Errorf("binancepay: asked for order %s, answered %s", tradeNo, q.MerchantTradeNo)
	}
	st := rails.CryptoOrderStatus{Currency: q.Currency, TransactionID: string(q.TransactionID)}
	switch q.Status {
	case "INITIAL", "PENDING":
		st.Status = rails.OrderPending
	case "PAID":
		st.Status = rails.OrderPaid
	case "CANCELED":
		st.Status = rails.OrderClosed
	case "EXPIRED":
		st.Status = rails.OrderExpired
	case "ERROR":
		st.Status = rails.OrderFailed
	default:
		// REFUNDING, REFUNDED, FULL_REFUNDED: a refund made outside this
		// service, which has no state for it; an operator must look.
		return rails.CryptoOrderStatus{}, fmt.Errorf("binancepay: order %s has status %q, which the service does not handle", tradeNo, q.Status)
	}
	if q.OrderAmount != "" {
		d, err := decimalText(string(q.OrderAmount))
		if err != nil {
			return rails.CryptoOrderStatus{}, fmt.Errorf("%w: binancepay order %s: amount %q", rails.ErrOutcomeUnknown, tradeNo, q.OrderAmount)
		}
		st.Amount = d.String()
	}
	if ms, err := strconv.ParseInt(string(q.TransactTime), 10, 64); err == nil && ms > 0 && st.Status == rails.OrderPaid {
		st.PaidAt = time.UnixMilli(ms).UTC()
	}
	return st, nil
}

// CloseOrder asks Binance to close the order under our reference; the
// close is confirmed later by a PAY_CLOSED webhook. rails.ErrNoRecord when
// there is no such order; an *APIError with CodeInvalidOrderStatus when
// payment has started.
func (c *Client) CloseOrder(ctx context.Context, reference string) error {
	tradeNo := TradeNo(reference)
	var accepted bool
	if err := c.post(ctx, pathCloseOrder, tradeNoBody{tradeNo}, &accepted); err != nil {
		if codeOf(err) == CodeOrderNotFound {
			return fmt.Errorf("binancepay: order %s: %w", tradeNo, rails.ErrNoRecord)
		}
		return err
	}
	if !accepted {
		return errors.New("binancepay: the close of order " + tradeNo + " was not accepted")
	}
	return nil
}
