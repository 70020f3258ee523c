package pipeline

import (
	"context"
	"errors"

	"merchantpay/ent"
	"merchantpay/internal/idem"
)

// KeyExtractor is a transport's reading of a request for the idempotency
// step: whether it is a write (a REST POST, a GraphQL mutation) and its
// Idempotency-Key ("" for none). An error refuses the request.
type KeyExtractor func(c *Call) (key string, write bool, err error)

// Operation runs a write's operation in tx, the transaction the idempotency
// store opened for it and hands it as an argument (nil for a Route.Lookup,
// which runs outside any), and renders its answer; ok false rolls the write
// back.
type Operation func(ctx context.Context, tx *ent.Tx, c *Call) (resp idem.Response, ok bool)

// Answer writes a write's answer, stored or replayed (replayed true: a
// repeat of the key, answered from its record).
type Answer func(c *Call, resp idem.Response, replayed bool)

// Idempotency is the idempotency step: a write runs through the
// idempotency store (idem.Store.Do: one transaction holding its effect and
// its stored answer, replayed for a repeat of its key) and is answered by
// answer; anything else goes on to next. It is the one place either API
// calls the store.
func (p *Pipeline) Idempotency(key KeyExtractor, op Operation, answer Answer) Middleware {
	return func(next Handler) Handler {
		return func(c *Call) error {
			k, write, err := key(c)
			if err != nil {
				return err
			}
			lookup := write && (c.Route.Lookup || (c.Route.Outside != nil && c.Route.Outside(c)))
			if !write || k == "" || lookup || idem.CheckKey(k) != nil {
				// Nothing to confirm a seen API key in: look it up first.
				if err := p.confirmNow(c.R.Context(), c); err != nil {
					return err
				}
			}
			if !write {
				return next(c)
			}
			do := p.Idem.Do
			if lookup {
				do = p.Idem.DoLookup
			}
			resp, replayed, err := do(c.R.Context(), idem.Request{
				Tenant: c.Principal.Tenant(), Key: k, Hash: idem.HashRequest(c.R.Method, c.R.URL.Path, c.Body), KeyHash: c.confirm,
			}, func(ctx context.Context, tx *ent.Tx) (idem.Response, bool) { return op(ctx, tx, c) })
			if err != nil {
				if errors.Is(err, idem.ErrKeyNotLive) && c.confirm != "" {
					p.Auth.Forget(c.confirm)
				}
				return err
			}
			answer(c, resp, replayed)
			return nil
		}
	}
}
