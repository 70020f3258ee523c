package graph

import (
	"context"

	"merchantpay/ent"
)

// A mutation's database transaction reaches the resolvers through the
// context, the one way gqlgen's executor lets the transport hand them
// something: the transport (the idempotency step's operation, in server)
// puts it there with WithRequestTx, a resolver reads it with requestTx and
// hands it to its operation as an argument. Nothing below the resolvers
// reads it from here.

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
