// Package flutterwave is the adapter for Flutterwave's v3 API: live payouts
// to Ghanaian (and Nigerian) bank accounts, and the transfer.completed
// webhook that reports their outcome.
//
// It is tested against flutterwavefake, built from Flutterwave's public
// documentation and SDKs; no test reaches Flutterwave. Not verified against
// the real provider: the look-up GET /v3/transfers?reference= (documented
// only by its users; a list that ignores the filter is treated as an
// unknown outcome, never as absence), what a duplicate reference answers
// (a refusal is looked up again before it is called a failure), and the
// flutterwave-signature header (accepted beside verif-hash, never
// required). v3 has no "reversed" status: a transfer.completed FAILED after
// a SUCCESSFUL one is how a reversal shows, under a key of its own.
package flutterwave

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"merchantpay/internal/clock"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/providerhttp"
)

// DefaultBaseURL is Flutterwave's API host; configuration may point
// elsewhere (a fake on loopback in tests).
const DefaultBaseURL = "https://api.flutterwave.com"

// DefaultTimeout bounds each call when the configuration sets none.
const DefaultTimeout = 30 * time.Second

// DefaultRecheck is how long after an answer of "pending" the payout is worth
// looking up again; webhooks usually arrive well before.
const DefaultRecheck = 10 * time.Minute

// Client talks to Flutterwave with one secret key.
type Client struct {
	base        string
	secretKey   string
	webhookHash string
	caller      providerhttp.Caller

	// Clock stamps results (NextCheck, SettledAt); the wall clock unless a
	// test sets another before first use.
	Clock clock.Clock
	// Recheck is how far ahead NextCheck is put for a pending payout.
	Recheck time.Duration
}

var (
	_ rails.PayoutProvider  = (*Client)(nil)
	_ rails.WebhookReceiver = (*Client)(nil)
)

// New builds the adapter. The base URL is scheme and host only (empty for
// DefaultBaseURL); the secret key authenticates calls and webhookHash is the
// secret hash set on Flutterwave's dashboard for webhooks.
func New(cfg rails.ProviderConfig, secretKey, webhookHash string) (*Client, error) {
	base, err := baseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	if secretKey == "" {
		return nil, errors.New("flutterwave: the secret key is empty")
	}
	if webhookHash == "" {
		return nil, errors.New("flutterwave: the webhook hash is empty")
	}
	c := &Client{base: base, secretKey: secretKey, webhookHash: webhookHash,
		caller: providerhttp.NewCaller(cfg, DefaultTimeout, secretKey, webhookHash), Clock: clock.Real{}, Recheck: DefaultRecheck}
	return c, nil
}

// Provider names the provider as LIVE_RAILS spells it.
func (c *Client) Provider() string { return rails.ProviderFlutterwave }

func baseURL(raw string) (string, error) {
	return providerhttp.BaseURL("flutterwave", raw, DefaultBaseURL)
}

// maxQuoted bounds the provider text an error or a reason quotes.
const maxQuoted = 200

// envelope is every answer's outer shape.
type envelope struct {
	Status  string          `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// apiError is a definite refusal by Flutterwave (a 4xx with its error
// envelope): nothing was done.
type apiError struct {
	HTTPStatus int
	Message    string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("flutterwave: refused (HTTP %d): %s", e.HTTPStatus, e.Message)
}

// call sends one request and decodes the success envelope's data into out.
// A transport failure, a timeout, a 5xx, a 429, a redirect (never
// followed) or an answer that does not parse wraps rails.ErrOutcomeUnknown;
// a 4xx with Flutterwave's error envelope is an *apiError. Error texts
// never carry the secret key.
func (c *Client) call(ctx context.Context, method, path string, body any, out any) error {
	label := "flutterwave " + method + " " + path
	status, raw, err := c.caller.SendJSON(ctx, label, method, c.base+path, c.secretKey, body)
	if err != nil {
		return err
	}
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil || env.Status == "" {
		return fmt.Errorf("%w: %s answered HTTP %d with a body that does not parse",
			rails.ErrOutcomeUnknown, label, status)
	}
	if status >= 300 || env.Status != "success" {
		if status < 400 {
			// A "success" status code with an error envelope says nothing certain.
			return fmt.Errorf("%w: %s answered HTTP %d with status %q",
				rails.ErrOutcomeUnknown, label, status, env.Status)
		}
		return &apiError{HTTPStatus: status, Message: c.caller.Quote(env.Message, maxQuoted)}
	}
	if out == nil {
		return nil
	}
	return providerhttp.DecodeData(label, env.Data, out)
}
