// Package providerhttp holds the HTTP call logic the rails adapters share:
// each call bounded by a timeout, the answer read up to a limit, redirects
// never followed, a transport failure, a timeout, a redirect, a 429 or a
// 5xx turned into rails.ErrOutcomeUnknown, and neither the credentials nor
// the transport's own error text (which quotes the request's address) in
// any error. Each adapter keeps its own request signing and answer
// envelopes.
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
	"strings"
	"time"
	"unicode/utf8"

	"merchantpay/internal/rails"
)

// MaxBody bounds what is read of an answer.
const MaxBody = 1 << 20

// Caller sends requests to one provider with one set of credentials.
type Caller struct {
	// HTTP sends the requests. Send never lets it follow a redirect,
	// whatever its CheckRedirect says; the client itself is not changed.
	HTTP *http.Client
	// Timeout bounds each call, reading the answer included.
	Timeout time.Duration
	// Secrets are replaced by "[redacted]" in every error text.
	Secrets []string
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
// /v3/transfers"). build's own error comes back as it is. Any answer that
// says nothing certain about what the provider did is an error wrapping
// rails.ErrOutcomeUnknown, which says what happened without quoting the
// transport's error:
//
//   - a transport failure, a timeout, an answer that cannot be read;
//   - a 5xx;
//   - a 429 Too Many Requests: every provider may answer it, and none
//     promises that the request it refuses was not acted on;
//   - a 3xx: a redirect is never followed (a payout POST must not be sent
//     again, nor turned into a GET elsewhere, and a 307 would carry the
//     signing headers to wherever it points), and it is no answer to what
//     was asked.
//
// Any other answer comes back with its status for the adapter to judge.
func (c *Caller) Send(ctx context.Context, label string, build func(context.Context) (*http.Request, error)) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := build(ctx)
	if err != nil {
		return 0, nil, err
	}
	hc := *c.HTTP
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, unclear(label, transportFailure(ctx, err))
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return 0, nil, unclear(label, "reading the answer: "+transportFailure(ctx, err))
	}
	switch s := resp.StatusCode; {
	case s >= 500 || s == http.StatusTooManyRequests:
		return 0, nil, unclear(label, fmt.Sprintf("HTTP %d", s))
	case s >= 300 && s < 400:
		return 0, nil, unclear(label, fmt.Sprintf("HTTP %d, a redirect, not followed", s))
	}
	return resp.StatusCode, answer, nil
}

// SendJSON is Send for a provider that takes a Bearer key and JSON:
// method to target with "Authorization: Bearer <key>", asking for JSON,
// with body (unless nil) encoded as JSON. An error building the request
// names label and does not quote the address.
func (c *Caller) SendJSON(ctx context.Context, label, method, target, key string, body any) (int, []byte, error) {
	var payload []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, fmt.Errorf("%s: encoding the request: %w", label, err)
		}
		payload = b
	}
	return c.Send(ctx, label, func(ctx context.Context) (*http.Request, error) {
		var rd io.Reader
		if payload != nil {
			rd = bytes.NewReader(payload)
		}
		req, err := http.NewRequestWithContext(ctx, method, target, rd)
		if err != nil {
			return nil, fmt.Errorf("%s: building the request failed", label)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "application/json")
		if payload != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req, nil
	})
}

// unclear is the error of the call label whose answer says nothing
// certain; what says why ("HTTP 503", "no answer within the time limit").
func unclear(label, what string) error {
	return fmt.Errorf("%w: %s: %s", rails.ErrOutcomeUnknown, label, what)
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

// Quote makes provider text fit for an error or a reason: the credentials
// redacted first (so that shortening can never leave part of one), control
// characters turned into spaces (no provider text breaks a log line), then
// clipped to at most n bytes as Clip does.
func (c *Caller) Quote(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, c.Redact(s))
	return Clip(s, n)
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
