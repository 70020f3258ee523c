package binancepayfake

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"merchantpay/internal/rails/binancepay"
	"merchantpay/internal/rails/railsfake"
)

// Failure is how the fake mishandles a coming call; its server errors
// answer 502 with an HTML page, as Binance's gateway does.
type Failure = railsfake.Failure

// The failures FailNext takes.
const (
	None              = railsfake.None
	TimeoutBefore     = railsfake.TimeoutBefore
	TimeoutAfter      = railsfake.TimeoutAfter
	ServerErrorBefore = railsfake.ServerErrorBefore
	ServerErrorAfter  = railsfake.ServerErrorAfter
)

func badGateway(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/html")
	w.WriteHeader(http.StatusBadGateway)
	_, _ = w.Write([]byte("<html><body>502 Bad Gateway</body></html>"))
}

// setStatus moves the order under tradeNo to status.
func (f *Fake) setStatus(tradeNo, status string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.byTradeNo(tradeNo)
	if o == nil {
		return fmt.Errorf("binancepayfake: no order %q", tradeNo)
	}
	if status == "PAID" {
		f.nextTx++
		o.TransactionID = "M" + strconv.FormatUint(f.nextTx, 10)
		o.PaidAt = time.Now().UTC().Truncate(time.Millisecond)
	}
	o.Status = status
	return nil
}

// SetStatus puts the order under tradeNo in any of Binance's statuses
// (INITIAL, PENDING, PAID, CANCELED, ERROR, REFUNDING, REFUNDED,
// FULL_REFUNDED, EXPIRED).
func (f *Fake) SetStatus(tradeNo, status string) error { return f.setStatus(tradeNo, status) }

// Pay marks the order under tradeNo paid, as a buyer would.
func (f *Fake) Pay(tradeNo string) error { return f.setStatus(tradeNo, "PAID") }

// CloseOrder closes the order under tradeNo at the provider's side.
func (f *Fake) CloseOrder(tradeNo string) error { return f.setStatus(tradeNo, "CANCELED") }

// Expire makes the order under tradeNo expired.
func (f *Fake) Expire(tradeNo string) error { return f.setStatus(tradeNo, "EXPIRED") }

// Order returns a copy of the order under tradeNo.
func (f *Fake) Order(tradeNo string) (Order, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o := f.byTradeNo(tradeNo); o != nil {
		return *o, true
	}
	return Order{}, false
}

// Orders returns copies of every order, oldest first.
func (f *Fake) Orders() []Order {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Order, 0, len(f.orders))
	for _, o := range f.orders {
		out = append(out, *o)
	}
	return out
}

// CertificateRequests counts the calls to the certificates endpoint.
func (f *Fake) CertificateRequests() int {
	n := 0
	for _, r := range f.Requests() {
		if r.Path == "/binancepay/openapi/certificates" {
			n++
		}
	}
	return n
}

// WebhookBody is the order notification for the order under tradeNo with
// bizStatus (PAY_SUCCESS or PAY_CLOSED); bizId is written as a bare JSON
// number, as Binance does, and the fake's prepayIds exceed 2^53.
func (f *Fake) WebhookBody(tradeNo, bizStatus string) ([]byte, error) {
	o, ok := f.Order(tradeNo)
	if !ok {
		return nil, fmt.Errorf("binancepayfake: no order %q", tradeNo)
	}
	data := map[string]any{"merchantTradeNo": o.MerchantTradeNo, "productType": "Food", "productName": o.Description,
		"tradeType": o.TerminalType, "totalFee": json.Number(o.Amount), "currency": o.Currency,
		"openUserId": "fakeopenuser", "commission": json.Number("0")}
	if o.TransactionID != "" {
		data["transactionId"] = o.TransactionID
		data["transactTime"] = o.PaidAt.UnixMilli()
		data["paymentInfo"] = map[string]any{"payerId": 1234567, "payMethod": "funding", "channel": "DEFAULT",
			"paymentInstructions": []map[string]any{{"currency": o.Currency, "amount": json.Number(o.Amount), "price": json.Number("1")}}}
	}
	inner, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"bizType": "PAY", "bizId": json.Number(o.PrepayID), "bizIdStr": o.PrepayID,
		"bizStatus": bizStatus, "data": string(inner)})
}

// SignWebhook signs body as Binance signs a webhook sent at at: the
// headers carry the fake's certificate serial, a nonce, the timestamp and
// the base64 RSA-SHA256 signature.
func (f *Fake) SignWebhook(body []byte, at time.Time) http.Header {
	f.mu.Lock()
	key, serial := f.key, f.serial
	f.mu.Unlock()
	ts, nonce := binancepay.Millis(at), binancepay.Nonce()
	digest := sha256.Sum256(binancepay.Payload(ts, nonce, body))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(binancepay.HeaderCertificate, serial)
	h.Set(binancepay.HeaderNonce, nonce)
	h.Set(binancepay.HeaderTimestamp, ts)
	h.Set(binancepay.HeaderSignature, base64.StdEncoding.EncodeToString(sig))
	return h
}

// SendWebhook posts the signed notification of the order under tradeNo to
// url (the order's webhookUrl when url is empty) and returns the answer.
func (f *Fake) SendWebhook(ctx context.Context, url, tradeNo, bizStatus string) (int, []byte, error) {
	body, err := f.WebhookBody(tradeNo, bizStatus)
	if err != nil {
		return 0, nil, err
	}
	if url == "" {
		o, _ := f.Order(tradeNo)
		url = o.WebhookURL
	}
	return railsfake.PostWebhook(ctx, url, f.SignWebhook(body, time.Now()), body)
}
