package store

import (
	"context"

	"merchantpay/ent"
)

// Statements put off to the end of a transaction. The conditional debit of
// a merchant's balance locks that row until the commit; every statement
// run after it, and its round trip, lengthens the time other requests of
// the same balance wait. A caller that writes more before committing (the
// idempotency record of a keyed request) marks its transaction with
// WithLast, and runs what Last put off with RunLast right before COMMIT.

type lastKey struct{}

type lastList struct {
	tx  *ent.Tx
	fns []func() error
}

// WithLast returns ctx, which carries a transaction, such that Last puts
// statements of that transaction off to RunLast.
func WithLast(ctx context.Context) context.Context {
	return context.WithValue(ctx, lastKey{}, &lastList{tx: ent.TxFromContext(ctx)})
}

// Last runs fn in ctx now, or, when ctx's transaction was marked by
// WithLast, puts it off until its owner calls RunLast, just before the
// commit; its error then fails the transaction there. fn must be the last
// thing its caller does in the transaction, and nothing may depend on its
// effect before the commit: Withdraw's debit is.
func Last(ctx context.Context, fn func(ctx context.Context) error) error {
	if l, ok := ctx.Value(lastKey{}).(*lastList); ok && l.tx != nil && l.tx == ent.TxFromContext(ctx) {
		l.fns = append(l.fns, func() error { return fn(ctx) })
		return nil
	}
	return fn(ctx)
}

// RunLast runs, in order, what Last put off in ctx's transaction (marked
// by WithLast), stopping at the first error.
func RunLast(ctx context.Context) error {
	l, ok := ctx.Value(lastKey{}).(*lastList)
	if !ok {
		return nil
	}
	fns := l.fns
	l.fns = nil
	for _, fn := range fns {
		if err := fn(); err != nil {
			return err
		}
	}
	return nil
}
