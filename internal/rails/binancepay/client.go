// Package binancepay is the adapter for Binance Pay: crypto-pay orders
// (create, query, close) over HMAC-signed requests, and the order webhooks,
// verified with RSA against the certificates Binance publishes.
//
// It is tested against binancepayfake, built from Binance's public
// documentation and SDKs; no test reaches Binance. Not verified against the
// real provider: error codes other than 400002, the recvWindow, whether
// goodsDetails is required in v3, the form of certPublic (PEM of either
// kind or bare base64 DER are all read), and HTTP statuses of FAIL answers
// (a FAIL envelope is a refusal whatever its status, but for a 3xx, a 429
// or a 5xx, which are unknown outcomes). Webhooks
// older or newer than MaxSkew (5 minutes) are refused as possible replays.
package binancepay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"merchantpay/internal/clock"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/providerhttp"
)

// DefaultBaseURL is Binance Pay's API host.
const DefaultBaseURL = "https://bpay.binanceapi.com"

// DefaultTimeout bounds each call when the configuration sets none.
const DefaultTimeout = 30 * time.Second

// Binance Pay's result codes that the adapter tells apart.
const (
	CodeDuplicateTradeNo   = "400201"
	CodeOrderNotFound      = "400202"
	CodeInvalidOrderStatus = "400204"
)

// ErrDuplicateTradeNo is CreateOrder's answer when Binance already has an
// order under the trade number: the reference was used before.
var ErrDuplicateTradeNo = errors.New("binancepay: an order already exists under this trade number")

// Client talks to Binance Pay with one API key pair.
type Client struct {
	base      string
	apiKey    string
	secretKey string
	caller    providerhttp.Caller

	// Clock stamps requests and judges webhook timestamps; the wall clock
	// unless a test sets another before first use.
	Clock clock.Clock
	// MaxSkew is how far a webhook's timestamp may be from now.
	MaxSkew time.Duration

	certs certCache
}

var (
	_ rails.CryptoOrderProvider = (*Client)(nil)
	_ rails.WebhookReceiver     = (*Client)(nil)
)

// New builds the adapter. The base URL is scheme and host only (empty for
// DefaultBaseURL); apiKey goes out as BinancePay-Certificate-SN and
// secretKey signs each request.
func New(cfg rails.ProviderConfig, apiKey, secretKey string) (*Client, error) {
	base, err := baseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if apiKey == "" || secretKey == "" {
		return nil, errors.New("binancepay: the API key and the secret key are both required")
	}
	c := &Client{base: base, apiKey: apiKey, secretKey: secretKey,
		caller: providerhttp.NewCaller(cfg, DefaultTimeout, secretKey, apiKey), Clock: clock.Real{}, MaxSkew: DefaultMaxSkew}
	c.certs.init()
	return c, nil
}

// Provider names the provider as LIVE_RAILS spells it.
func (c *Client) Provider() string { return rails.ProviderBinancePay }

func baseURL(raw string) (string, error) {
	return providerhttp.BaseURL("binancepay", raw, DefaultBaseURL)
}

// envelope is every answer's outer shape.
type envelope struct {
	Status       string          `json:"status"`
	Code         string          `json:"code"`
	Data         json.RawMessage `json:"data"`
	ErrorMessage string          `json:"errorMessage"`
}

// APIError is a FAIL answer: Binance refused the request and did nothing.
type APIError struct {
	Code    string
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("binancepay: refused with code %s: %s", e.Code, e.Message)
}

// Is makes every FAIL answer a rails.ErrRefused.
func (e *APIError) Is(target error) bool { return target == rails.ErrRefused }

// post signs and sends one request and decodes a SUCCESS answer's data into
// out. A transport failure, a timeout, a 5xx, a 429, a redirect (never
// followed: it would carry the signing headers elsewhere) or an answer that
// does not parse wraps rails.ErrOutcomeUnknown; a FAIL answer is an
// *APIError. Error texts never carry the keys.
func (c *Client) post(ctx context.Context, path string, body any, out any) error {
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("binancepay: encoding the request: %w", err)
	}
	label := "binancepay " + path
	status, answer, err := c.caller.Send(ctx, label, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("binancepay: building the request: %w", err)
		}
		ts, nonce := Millis(c.Clock.Now()), Nonce()
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(HeaderTimestamp, ts)
		req.Header.Set(HeaderNonce, nonce)
		req.Header.Set(HeaderCertificate, c.apiKey)
		req.Header.Set(HeaderSignature, Sign(c.secretKey, ts, nonce, raw))
		return req, nil
	})
	if err != nil {
		return err
	}
	var env envelope
	if err := json.Unmarshal(answer, &env); err != nil || (env.Status != "SUCCESS" && env.Status != "FAIL") {
		return fmt.Errorf("%w: %s answered HTTP %d with a body that does not parse",
			rails.ErrOutcomeUnknown, label, status)
	}
	if env.Status == "FAIL" {
		return &APIError{Code: c.caller.Quote(env.Code, 20), Message: c.caller.Quote(env.ErrorMessage, 200)}
	}
	if status >= 300 {
		return fmt.Errorf("%w: %s answered HTTP %d with status SUCCESS",
			rails.ErrOutcomeUnknown, label, status)
	}
	if out == nil {
		return nil
	}
	return providerhttp.DecodeData(label, env.Data, out)
}

// codeOf is the FAIL code of err, or "".
func codeOf(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// flexString reads a JSON string or number as text, keeping a number's
// digits exactly (ids above 2^53 and decimal amounts).
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*f = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("binancepay: %s is neither a string nor a number", b)
		}
		*f = flexString(n)
	}
	return nil
}
