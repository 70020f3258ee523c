package withdrawals

import (
	"context"

	"merchantpay/ent"
	"merchantpay/internal/rails"
)

// SucceedAll exposes succeedAll, in tx, to the package's external tests.
func (s *Service) SucceedAll(ctx context.Context, tx *ent.Tx, owner string, ts []*ent.Transaction, res []rails.PayoutResult) ([]*ent.Transaction, error) {
	ps := make([]paid, len(ts))
	for i := range ts {
		ps[i] = paid{t: ts[i], res: res[i]}
	}
	return s.succeedAll(ctx, tx, owner, ps)
}

// Ask exposes one payout step's asking of the rails (submission or
// look-up) to the package's external tests: the step's error, or the
// rails' error it met.
func (p *Payouts) Ask(ctx context.Context, t *ent.Transaction) error {
	a, err := p.ask(ctx, t)
	if err != nil {
		return err
	}
	return a.err
}
