// Package providerhttp holds the HTTP call logic the rails adapters share:
// each call bounded by a timeout, the answer read up to a limit, a
// transport failure, a timeout or a 5xx turned into rails.ErrOutcomeUnknown,
// and the credentials kept out of every error text. Each adapter keeps its
// own request signing and answer envelopes.
package providerhttp

import (
	"bytes"
	"context"
	"encoding/json"
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
	// HTTP sends the requests.
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
// /v3/transfers"). A transport failure, a timeout, an answer that cannot be
// read or a 5xx is an error wrapping rails.ErrOutcomeUnknown; build's own
// error comes back as it is. Any other answer comes back with its status
// for the adapter to judge.
func (c *Caller) Send(ctx context.Context, label string, build func(context.Context) (*http.Request, error)) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	req, err := build(ctx)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %s: %v", rails.ErrOutcomeUnknown, label, c.Redact(err.Error()))
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, MaxBody))
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %s: reading the answer: %v", rails.ErrOutcomeUnknown, label, c.Redact(err.Error()))
	}
	if resp.StatusCode >= 500 {
		return 0, nil, fmt.Errorf("%w: %s answered HTTP %d", rails.ErrOutcomeUnknown, label, resp.StatusCode)
	}
	return resp.StatusCode, answer, nil
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
