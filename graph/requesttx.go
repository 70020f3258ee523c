package graph

import (
	"context"

	"merchantpay/ent"
	"merchantpay/internal/store"
)

// A mutation's database transaction reaches the resolvers through the
// context, the one way gqlgen's executor lets the transport hand them
// something: the transport (the idempotency step's operation, in server)
// puts it there with WithRequestTx, a resolver reads it with requestTx and
// hands it to its operation as an argument. Nothing below the resolvers
// reads it from here, but for the bridge below.

type requestTxKey struct{}

// WithRequestTx returns ctx carrying tx, the transaction the idempotency
// step opened for a mutation, for the resolvers.
func WithRequestTx(ctx context.Context, tx *ent.Tx) context.Context {
	return context.WithValue(ctx, requestTxKey{}, tx)
}

// requestTx is the transaction WithRequestTx put in ctx: nil when there is
// none (a query), and the operation then opens its own.
func requestTx(ctx context.Context) *ent.Tx {
	tx, _ := ctx.Value(requestTxKey{}).(*ent.Tx)
	return tx
}

// legacyTxCtx is ctx carrying the request's transaction where
// internal/events and internal/webhooks still look for it (store.WithTx):
// the reads a mutation's answer makes through them (a transaction's events,
// an event's deliveries) must see the mutation's uncommitted rows. Without
// a request transaction (a query) it is ctx.
//
// Deprecated: kept until internal/events and internal/webhooks take their transaction as an argument.
func legacyTxCtx(ctx context.Context) context.Context {
	if tx := requestTx(ctx); tx != nil {
		return store.WithTx(ctx, tx)
	}
	return ctx
}
