// Package paystack is the adapter to Paystack (Nigeria): NGN payouts as
// transfers to `nuban` recipients, the name enquiry, dedicated virtual
// accounts, and Paystack's webhooks. It implements the rails contract
// (rails.PayoutProvider, rails.NameEnquirer, rails.AccountProvider,
// rails.WebhookReceiver) over Paystack's REST API, whose base URL comes from
// configuration so that the fake in paystackfake can stand in for it.
//
// Every call is bounded by the configured timeout. An answer that does not
// say what happened (a timeout, a reset, a 5xx, a body that does not parse)
// is an error wrapping rails.ErrOutcomeUnknown. No error text ever carries
// the secret key or the Authorization header.
package paystack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/clock"
	"merchantpay/internal/rails"
	"merchantpay/internal/rails/providerhttp"
)

// DefaultBaseURL is Paystack's API host; test and live mode share it (the
// key decides).
const DefaultBaseURL = "https://api.paystack.co"

// DefaultTimeout bounds each call when the configuration leaves it zero.
const DefaultTimeout = 30 * time.Second

// DefaultPreferredBank is the dedicated-account provider asked for unless
// WithPreferredBank says otherwise (a slug of GET /dedicated_account/available_providers).
const DefaultPreferredBank = "wema-bank"

// DefaultPollInterval is how long after an answer that leaves a payout
// pending the adapter suggests looking it up again (PayoutResult.NextCheck).
const DefaultPollInterval = 2 * time.Minute

// Client talks to one Paystack integration with one secret key. It is safe
// for concurrent use.
type Client struct {
	base          string
	key           string
	caller        providerhttp.Caller
	preferredBank string
	emailDomain   string
	pollInterval  time.Duration
	dir           *banks.Directory
	clock         clock.Clock
}

var (
	_ rails.PayoutProvider  = (*Client)(nil)
	_ rails.NameEnquirer    = (*Client)(nil)
	_ rails.AccountProvider = (*Client)(nil)
	_ rails.WebhookReceiver = (*Client)(nil)
)

// Option adjusts a Client built by New.
type Option func(*Client)

// WithPreferredBank sets the dedicated-account provider's slug (e.g.
// "wema-bank", "titan-paystack"; Paystack's test mode uses "test-bank").
func WithPreferredBank(slug string) Option { return func(c *Client) { c.preferredBank = slug } }

// WithCustomerEmailDomain sets the domain of the addresses that identify
// virtual accounts' customers at Paystack. Changing it on a running
// integration makes retries of accounts asked for before the change create
// new customers, so set it once.
func WithCustomerEmailDomain(domain string) Option { return func(c *Client) { c.emailDomain = domain } }

// WithBankDirectory sets the bank list used to find the code of the bank a
// dedicated account is at; by default the embedded list is loaded.
func WithBankDirectory(d *banks.Directory) Option { return func(c *Client) { c.dir = d } }

// WithClock sets the clock that dates NextCheck (tests).
func WithClock(k clock.Clock) Option { return func(c *Client) { c.clock = k } }

// WithPollInterval sets how far ahead NextCheck lies for a pending payout.
func WithPollInterval(d time.Duration) Option { return func(c *Client) { c.pollInterval = d } }

// New builds a client. cfg.BaseURL must be scheme and host only (empty means
// DefaultBaseURL); secretKey is the integration's secret key (sk_live_… or
// sk_test_…), which also signs Paystack's webhooks.
func New(cfg rails.ProviderConfig, secretKey string, opts ...Option) (*Client, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	if err := checkBaseURL(base); err != nil {
		return nil, err
	}
	if secretKey == "" {
		return nil, errors.New("paystack: the secret key is empty")
	}
	for _, r := range secretKey {
		if r <= ' ' || r == 0x7f {
			return nil, errors.New("paystack: the secret key contains white space or control characters")
		}
	}
	c := &Client{base: strings.TrimSuffix(base, "/"), key: secretKey, caller: providerhttp.NewCaller(cfg, DefaultTimeout, secretKey),
		preferredBank: DefaultPreferredBank, emailDomain: DefaultCustomerEmailDomain, pollInterval: DefaultPollInterval, clock: clock.Real{}}
	for _, o := range opts {
		o(c)
	}
	if c.preferredBank == "" {
		return nil, errors.New("paystack: the preferred dedicated-account bank is empty")
	}
	if !validDomain(c.emailDomain) {
		return nil, fmt.Errorf("paystack: customer e-mail domain %q is not a domain name", c.emailDomain)
	}
	if c.dir == nil {
		d, err := banks.Load()
		if err != nil {
			return nil, fmt.Errorf("paystack: loading the bank list: %w", err)
		}
		c.dir = d
	}
	return c, nil
}

// checkBaseURL accepts http(s)://host[:port] with nothing after the host
// but an optional slash.
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("paystack: base URL %q does not parse", s)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("paystack: base URL %q must start with https:// or http://", s)
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" ||
		u.Opaque != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		return fmt.Errorf("paystack: base URL %q must be scheme and host only (e.g. %s)", s, DefaultBaseURL)
	}
	return nil
}

// validDomain accepts dot-separated labels of letters, digits and hyphens.
func validDomain(d string) bool {
	labels := strings.Split(d, ".")
	if len(d) > 200 || len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			ch := l[i] | 0x20
			if !(ch >= 'a' && ch <= 'z' || l[i] >= '0' && l[i] <= '9' || l[i] == '-') {
				return false
			}
		}
	}
	return true
}

// Provider names the provider as LIVE_RAILS spells it.
func (c *Client) Provider() string { return rails.ProviderPaystack }

// envelope is Paystack's answer: status, message and data, or on an error
// status false with type and code.
type envelope struct {
	Status  bool            `json:"status"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
	Type    string          `json:"type"`
	Code    string          `json:"code"`
}

// answer is a parsed HTTP answer from Paystack.
type answer struct {
	httpStatus int
	env        envelope
}

// refused reports whether Paystack answered that it did not do what was
// asked: a 4xx (call lets through only those with status false).
func (a answer) refused() bool { return a.httpStatus >= 400 }

// call sends one request and reads the envelope. A transport failure, a
// timeout, a 5xx, a 429, a redirect (never followed), a body that does not
// parse, or a status field that contradicts the HTTP status comes back as
// an error wrapping rails.ErrOutcomeUnknown; any other 4xx comes back as an
// answer for the caller to judge.
func (c *Client) call(ctx context.Context, method, path string, query url.Values, body any) (answer, error) {
	target := c.base + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	status, raw, err := c.caller.SendJSON(ctx, "paystack "+method+" "+pathOnly(path), method, target, c.key, body)
	if errors.Is(err, rails.ErrOutcomeUnknown) {
		return answer{}, unclear(err)
	}
	if err != nil {
		return answer{}, err
	}
	a := answer{httpStatus: status}
	if err := json.Unmarshal(raw, &a.env); err != nil {
		return answer{}, c.unknown(method, path, fmt.Sprintf("HTTP %d with a body that is not Paystack's JSON envelope", status))
	}
	switch {
	case status < 200 || status >= 300 && status < 400:
		return answer{}, c.unknown(method, path, fmt.Sprintf("unexpected HTTP %d", status))
	case status < 300 && !a.env.Status:
		return answer{}, c.unknown(method, path, fmt.Sprintf("HTTP %d with status false", status))
	case status >= 400 && a.env.Status:
		return answer{}, c.unknown(method, path, fmt.Sprintf("HTTP %d with status true", status))
	}
	return a, nil
}

// unknown is the error for an answer that says nothing certain.
func (c *Client) unknown(method, path, what string) error {
	return unclear(fmt.Errorf("paystack: %s %s: %s: %w", method, pathOnly(path), what, rails.ErrOutcomeUnknown))
}

// unclear is the error for an answer that says nothing certain, cause
// wrapping rails.ErrOutcomeUnknown.
func unclear(cause error) error {
	return &apperr.Error{Kind: apperr.Unavailable, Message: "the payment provider did not give a clear answer", Cause: cause}
}

// refusal is the error for a 4xx the caller does not turn into a result.
func (c *Client) refusal(method, path string, a answer) error {
	return &apperr.Error{Kind: apperr.Unavailable, Message: "the payment provider refused the request",
		Cause: fmt.Errorf("paystack: %s %s: HTTP %d: %s", method, pathOnly(path), a.httpStatus, c.caller.Quote(a.env.Message, maxQuoted))}
}

// declined is the error for a 4xx refusal of a request a merchant waits
// for (opening a virtual account): Paystack made nothing, and the same
// request would be refused again, so it is a 422, not a 503 "try again".
func (c *Client) declined(method, path string, a answer) error {
	quoted := c.caller.Quote(a.env.Message, maxQuoted)
	return &apperr.Error{Kind: apperr.RailRefused,
		Message: fmt.Sprintf("the account provider refused to open the account (HTTP %d: %s); nothing was made, and the same request will be refused again", a.httpStatus, quoted),
		Cause:   fmt.Errorf("paystack: %s %s: HTTP %d: %s: %w", method, pathOnly(path), a.httpStatus, quoted, rails.ErrRefused)}
}

// pathOnly keeps the fixed part of a path; references in it are ours and
// harmless, but a path never carries more than the route and the reference.
func pathOnly(p string) string {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i]
	}
	return p
}

// maxQuoted bounds the provider text an error or a reason quotes.
const maxQuoted = 200

// decodeData reads an answer's data into v; a body Paystack should not send
// is an unknown outcome.
func (c *Client) decodeData(method, path string, a answer, v any) error {
	if len(a.env.Data) == 0 || string(a.env.Data) == "null" {
		return c.unknown(method, path, "the answer has no data")
	}
	if err := json.Unmarshal(a.env.Data, v); err != nil {
		return c.unknown(method, path, "the answer's data does not parse")
	}
	return nil
}
