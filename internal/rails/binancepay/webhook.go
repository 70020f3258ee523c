package binancepay

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"merchantpay/internal/rails"
	"merchantpay/internal/rails/providerhttp"
)

// DefaultMaxSkew is how far from now a webhook's BinancePay-Timestamp may
// be; an older delivery is refused as a possible replay.
const DefaultMaxSkew = 5 * time.Minute

// ErrBadSignature is Verify's answer to a delivery whose headers or RSA
// signature do not check out.
var ErrBadSignature = errors.New("binancepay: webhook signature not valid")

// Verify checks a webhook: its timestamp within MaxSkew of now, then the
// base64 RSA PKCS#1 v1.5 SHA-256 signature over Payload under the public
// key of the certificate the BinancePay-Certificate-SN header names (fetched
// from Binance on first sight of a serial; see RefetchPerSerial).
func (c *Client) Verify(ctx context.Context, h http.Header, body []byte) error {
	ts, nonce, serial := h.Get(HeaderTimestamp), h.Get(HeaderNonce), h.Get(HeaderCertificate)
	sigText := h.Get(HeaderSignature)
	if ts == "" || nonce == "" || serial == "" || sigText == "" {
		return fmt.Errorf("%w: a BinancePay header is missing", ErrBadSignature)
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: timestamp %q is not milliseconds", ErrBadSignature, providerhttp.Clip(ts, 20))
	}
	if skew := c.Clock.Now().Sub(time.UnixMilli(ms)); skew > c.MaxSkew || skew < -c.MaxSkew {
		return fmt.Errorf("%w: timestamp %s is %s from now", ErrBadSignature, ts, skew.Round(time.Second))
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sigText))
	if err != nil {
		return fmt.Errorf("%w: the signature is not base64", ErrBadSignature)
	}
	key, err := c.publicKey(ctx, serial)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	digest := sha256.Sum256(Payload(ts, nonce, body))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], sig); err != nil {
		return fmt.Errorf("%w: RSA verification failed", ErrBadSignature)
	}
	return nil
}

// webhookBody is Binance's order notification; data is a JSON string.
type webhookBody struct {
	BizType   string     `json:"bizType"`
	BizID     flexString `json:"bizId"`
	BizIDStr  string     `json:"bizIdStr"`
	BizStatus string     `json:"bizStatus"`
	Data      string     `json:"data"`
}

type payData struct {
	MerchantTradeNo string     `json:"merchantTradeNo"`
	TotalFee        flexString `json:"totalFee"`
	Currency        string     `json:"currency"`
	TransactionID   flexString `json:"transactionId"`
	TransactTime    flexString `json:"transactTime"`
}

// Notices reads a verified delivery. PAY with PAY_SUCCESS or PAY_CLOSED
// gives an order notice keyed "PAY:<bizIdStr>:<bizStatus>" (the same for a
// repeated delivery); any other bizType or status gives a notice with only
// its key. bizId may exceed 2^53, so bizIdStr is read (bizId's digits,
// kept exactly, only when bizIdStr is absent).
func (c *Client) Notices(body []byte) ([]rails.Notice, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var w webhookBody
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("binancepay: the webhook does not parse: %w", err)
	}
	id := w.BizIDStr
	if id == "" {
		id = string(w.BizID)
	}
	if w.BizType == "" || id == "" || w.BizStatus == "" {
		return nil, errors.New("binancepay: the webhook lacks bizType, bizIdStr or bizStatus")
	}
	key := w.BizType + ":" + id + ":" + w.BizStatus
	var status string
	switch {
	case w.BizType == "PAY" && w.BizStatus == "PAY_SUCCESS":
		status = rails.OrderPaid
	case w.BizType == "PAY" && w.BizStatus == "PAY_CLOSED":
		status = rails.OrderClosed
	default:
		return []rails.Notice{{Key: key}}, nil
	}
	var d payData
	inner := json.NewDecoder(strings.NewReader(w.Data))
	inner.UseNumber()
	if err := inner.Decode(&d); err != nil {
		return nil, fmt.Errorf("binancepay: the webhook's data does not parse: %w", err)
	}
	if d.MerchantTradeNo == "" {
		return nil, errors.New("binancepay: the webhook's data has no merchantTradeNo")
	}
	n := &rails.OrderNotice{TradeNo: d.MerchantTradeNo, ProviderReference: id, Status: status,
		Currency: d.Currency, TransactionID: string(d.TransactionID)}
	if d.TotalFee != "" {
		amt, err := decimalText(string(d.TotalFee))
		if err != nil {
			return nil, fmt.Errorf("binancepay: the webhook's totalFee %q is not a decimal", d.TotalFee)
		}
		n.Amount = amt.String()
	}
	if ms, err := strconv.ParseInt(string(d.TransactTime), 10, 64); err == nil && ms > 0 {
		n.At = time.UnixMilli(ms).UTC()
	}
	return []rails.Notice{{Key: key, Order: n}}, nil
}

// Ack is the answer Binance expects; anything else makes it retry.
func (c *Client) Ack() (string, []byte) {
	return "application/json", []byte(`{"returnCode":"SUCCESS","returnMessage":null}`)
}
