package pipeline

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"merchantpay/internal/apperr"
	"merchantpay/internal/idem"
	"merchantpay/internal/merchants"
	"merchantpay/internal/obs"
	"merchantpay/internal/tenant"
)

// KeyFrom reads the API key of a request: X-API-KEY, or Authorization: Bearer.
func KeyFrom(h http.Header) string {
	if k := strings.TrimSpace(h.Get("X-API-KEY")); k != "" {
		return k
	}
	if a := h.Get("Authorization"); len(a) > 7 && strings.EqualFold(a[:7], "bearer ") {
		return strings.TrimSpace(a[7:])
	}
	return ""
}

// Authenticate finds the caller of the key in h (the headers of a request,
// or a WebSocket's connection_init payload).
func (p *Pipeline) Authenticate(ctx context.Context, h http.Header) (merchants.Principal, error) {
	key := KeyFrom(h)
	if key == "" {
		return merchants.Principal{}, apperr.New(apperr.Unauthorized, "missing API key: send it in the X-API-KEY header")
	}
	return p.Auth.Authenticate(ctx, key)
}

// Authenticated is the authentication step: it finds the caller, by the
// route's AuthenticateWith when it has one, by the idempotency look-up to
// come when the route may confirm a seen key (Route.ConfirmSeenKey), else
// by a look-up of the key.
func (p *Pipeline) Authenticated(next Handler) Handler {
	return func(c *Call) error {
		ctx := c.R.Context()
		if with := c.Route.AuthenticateWith; with != nil {
			if key := KeyFrom(c.R.Header); key != "" {
				pr, found, err := with(c, key)
				if err != nil {
					return err
				}
				if found {
					c.Principal = pr
					return next(c)
				}
			}
		}
		if c.Route.ConfirmSeenKey && p.Idem.ConfirmsKeys() && mayBeKeyed(c) {
			if seen, ok := p.Auth.Seen(KeyFrom(c.R.Header)); ok {
				c.Principal, c.confirm = seen, seen.KeyHash
				return p.refusedFirst(ctx, c, next(c))
			}
		}
		pr, err := p.Authenticate(ctx, c.R.Header)
		if err != nil {
			return err
		}
		c.Principal = pr
		return next(c)
	}
}

// mayBeKeyed reports whether c may be a keyed write: it has a valid
// Idempotency-Key header, or none and its route may find the key in the
// body.
func mayBeKeyed(c *Call) bool {
	if ik := c.R.Header.Get("Idempotency-Key"); ik != "" {
		return idem.CheckKey(ik) == nil
	}
	return c.Route.KeyInBody
}

// refusedFirst is the refusal of a request whose seen API key was taken on
// trust: err, unless the key is no longer live, which is refused first,
// as it would have been had it been looked up before the other steps.
// A refusal costs the look-up; an answer does not.
func (p *Pipeline) refusedFirst(ctx context.Context, c *Call, err error) error {
	if err == nil || c.confirm == "" || errors.Is(err, idem.ErrKeyNotLive) {
		return err
	}
	if _, aerr := p.Authenticate(ctx, c.R.Header); aerr != nil {
		return aerr
	}
	return err
}

// confirmNow looks up a seen API key taken on trust (Route.KeyInBody)
// when the request will not confirm it in an idempotency look-up.
func (p *Pipeline) confirmNow(ctx context.Context, c *Call) error {
	if c.confirm == "" {
		return nil
	}
	c.confirm = "" // looked up now, not again on a refusal
	_, err := p.Authenticate(ctx, c.R.Header)
	return err
}

// KeyKind is the step that refuses a key of a kind the route does not take
// (a public key where a secret one is needed): 403.
func KeyKind(next Handler) Handler {
	return func(c *Call) error {
		if err := CheckKind(c.Principal, c.Route); err != nil {
			return err
		}
		return next(c)
	}
}

// CheckKind refuses p on route unless its key is of a kind the route takes.
func CheckKind(p merchants.Principal, route *Route) error {
	if p.Kind != merchants.Secret && route.Access != PublicKey {
		return apperr.New(apperr.Forbidden, "%s", route.Forbidden)
	}
	return nil
}

// RateLimited is the rate-limit step: one token of the caller's key.
func (p *Pipeline) RateLimited(next Handler) Handler {
	return func(c *Call) error {
		if err := p.Allow(c.Principal); err != nil {
			return err
		}
		return next(c)
	}
}

// Allow takes one token of pr's key in the rate limit: a *RetryError when
// none is left.
func (p *Pipeline) Allow(pr merchants.Principal) error {
	if p.Limiter == nil {
		return nil
	}
	if ok, retry := p.Limiter.Allow(LimiterKey(pr)); !ok {
		return &RetryError{Err: apperr.New(apperr.RateLimited, "too many requests for this key; retry after %d s", retry), After: retry}
	}
	return nil
}

// LimiterKey is p's bucket in the rate limit, one for both APIs.
func LimiterKey(p merchants.Principal) string { return p.KeyPrefix + p.MerchantID + p.Mode + p.Kind }

// RetryError is a refusal the client may retry after After seconds
// (RATE_LIMITED); transports send After as Retry-After.
type RetryError struct {
	Err   *apperr.Error
	After int
}

func (e *RetryError) Error() string { return e.Err.Error() }
func (e *RetryError) Unwrap() error { return e.Err }

// RetryAfter is the Retry-After value of a RetryError's wait (at least one
// second).
func RetryAfter(seconds int) string {
	if seconds < 1 {
		seconds = 1
	}
	return strconv.Itoa(seconds)
}

// unavailableRetryAfter is the Retry-After, in seconds, of a 503 answer:
// the database is down or failing over, which takes seconds.
const unavailableRetryAfter = "2"

// SetRetryAfter tells the client of a 503 answer when to try again, unless
// the answer already says. Both APIs' answers use it.
func SetRetryAfter(h http.Header, status int) {
	if status == http.StatusServiceUnavailable && h.Get("Retry-After") == "" {
		h.Set("Retry-After", unavailableRetryAfter)
	}
}

// Tenant is the step that scopes the request to the caller: its context
// carries the principal, the tenant every query is scoped to, and the
// logger's merchant and mode.
func Tenant(next Handler) Handler {
	return func(c *Call) error {
		c.R = c.R.WithContext(WithPrincipal(c.R.Context(), c.Principal))
		return next(c)
	}
}

// WithPrincipal is ctx acting for p.
func WithPrincipal(ctx context.Context, p merchants.Principal) context.Context {
	ctx = merchants.WithPrincipal(tenant.With(ctx, p.Tenant()), p)
	return obs.With(ctx, "merchant", p.MerchantID, "mode", p.Mode)
}
