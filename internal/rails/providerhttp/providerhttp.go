// Package providerhttp holds the HTTP call logic the rails adapters share:
// each call bounded by a timeout, the answer read up to a limit, a
// transport failure, a timeout or a 5xx turned into rails.ErrOutcomeUnknown,
// and the credentials kept out of every error text; an adapter may ask for
// stricter handling (Paystack's). Each adapter keeps its own request
// signing and answer envelopes.
package providerhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"merchantpay/internal/rails"
)

// MaxBody bounds what is read of an answer.
const MaxBody = 1 << 20

// Caller sends requests to one provider with one set of credentials.
type Caller struct {
	// HTTP sends the requests.
	HTTP *http.Client
	// Timeout bounds each call, reading the answer included.
	Timeout time.Duration
	// Secrets are replaced by "[redacted]" in every error text.
	Secrets []string

	// What follows is a stricter handling for an adapter that asks for it
	// (Paystack's); left unset, Send behaves as described there.

	// Unknown, when set, makes the error of every answer that says nothing
	// certain: label is Send's, and what says what happened ("HTTP 503",
	// "no answer within the time limit") without quoting the transport's
	// error, whose text can carry the request's address and query. Unset,
	// the error wraps rails.ErrOutcomeUnknown and quotes the transport's
	// error, redacted.
	Unknown func(label, what string) error
	// UnknownStatuses are statuses below 500 that say nothing certain
	// either (Paystack's 429 Too Many Requests): Send treats them as a 5xx.
	UnknownStatuses []int
}

// RefuseRedirects makes the caller hand a redirect back as the answer
// instead of following it: a POST turned into a GET elsewhere would say
// nothing about what was asked. The caller's HTTP client is copied, not
// changed.
func (c *Caller) RefuseRedirects() {
	hc := *c.HTTP
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.HTTP = &hc
}

// BaseURL checks a configured base URL, scheme and host only (an optional
// trailing slash is dropped), and gives def when raw is empty. provider
// names the adapter in the error.
func BaseURL(provider, raw, def string) (string, error) {
	if raw == "" {
		return def, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("%s: base URL %q is not a scheme and host", provider, raw)
	}
	return strings.TrimSuffix(raw, "/"), nil
}

// NewCaller takes the HTTP client and timeout from cfg, with a plain
// client when it sets none and defaultTimeout when its timeout is not
// positive; secrets are kept out of error texts.
func NewCaller(cfg rails.ProviderConfig, defaultTimeout time.Duration, secrets ...string) Caller {
	c := Caller{HTTP: cfg.Client, Timeout: cfg.Timeout, Secrets: secrets}
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	if c.HTTP == nil {
		c.HTTP = &http.Client{}
	}
	return c
}

// Send builds a request with build (under the call's deadline), sends it
// and reads the answer. label names the call in errors ("flutterwave GET
// /v3/transfers"). A transport failure, a timeout, an answer that cannot be
// read, a 5xx or one of UnknownStatuses is an error wrapping
// rails.ErrOutcomeUnknown (or Unknown's error); build's own error comes
// back as it is. Any other answer comes back with its status for the
// adapter to judge.
func (c *Caller) Send(ctx context.Context, label string, build func(context.Context) (*http.Request, error)) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := build(ctx)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, c.failed(ctx, label, "", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return 0, nil, c.failed(ctx, label, "reading the answer: ", err)
	}
	if resp.StatusCode >= 500 || slices.Contains(c.UnknownStatuses, resp.StatusCode) {
		if c.Unknown != nil {
			return 0, nil, c.Unknown(label, fmt.Sprintf("HTTP %d", resp.StatusCode))
		}
		return 0, nil, fmt.Errorf("%w: %s answered HTTP %d", rails.ErrOutcomeUnknown, label, resp.StatusCode)
	}
	return resp.StatusCode, answer, nil
}

// failed is the error of a round trip that failed at step ("" for the
// request, "reading the answer: " for the answer) with err.
func (c *Caller) failed(ctx context.Context, label, step string, err error) error {
	if c.Unknown != nil {
		return c.Unknown(label, step+transportFailure(ctx, err))
	}
	return fmt.Errorf("%w: %s: %s%v", rails.ErrOutcomeUnknown, label, step, c.Redact(err.Error()))
}

// transportFailure describes a failed round trip without quoting the
// underlying error, whose text could carry request details.
func transportFailure(ctx context.Context, err error) string {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return "no answer within the time limit"
	case errors.Is(err, context.Canceled):
		return "the request was canceled"
	default:
		var ue *url.Error
		if errors.As(err, &ue) && ue.Timeout() {
			return "no answer within the time limit"
		}
		return "the connection failed"
	}
}

// Redact removes the credentials from a text that may echo a request.
func (c *Caller) Redact(s string) string {
	for _, secret := range c.Secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

// DecodeData reads an envelope's data into out, keeping numbers as
// json.Number; data that does not parse is an unknown outcome.
func DecodeData(label string, data json.RawMessage, out any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%w: %s: the data does not parse: %v", rails.ErrOutcomeUnknown, label, err)
	}
	return nil
}

// Clip trims s and shortens it to at most n bytes on a rune boundary.
func Clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
