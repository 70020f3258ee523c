package withdrawals

import (
	"context"

	"merchantpay/ent"
	"merchantpay/internal/rails"
)

// SucceedAll exposes succeedAll to the package's external tests.
func (s *Service) SucceedAll(ctx context.Context, owner string, ts []*ent.Transaction, res []rails.PayoutResult) ([]*ent.Transaction, error) {
	ps := make([]paid, len(ts))
	for i := range ts {
		ps[i] = paid{t: ts[i], res: res[i]}
	}
	return s.succeedAll(ctx, owner, ps)
}
