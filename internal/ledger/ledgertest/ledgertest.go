// Package ledgertest reads a balance for tests the way merchants read
// theirs: through ledger.Service.Balances, as GET /balances and the
// balances query do.
package ledgertest

import (
	"context"
	"fmt"

	"merchantpay/internal/ledger"
	"merchantpay/internal/money"
)

// Balance is the ctx tenant's balance in currency c, picked from
// Balances.
func Balance(ctx context.Context, l *ledger.Service, c money.Currency) (ledger.Balance, error) {
	bs, err := l.Balances(ctx)
	if err != nil {
		return ledger.Balance{}, err
	}
	for _, b := range bs {
		if b.Currency == c {
			return b, nil
		}
	}
	return ledger.Balance{}, fmt.Errorf("ledgertest: Balances has no %s", c)
}
