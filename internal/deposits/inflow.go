package deposits

import (
	"context"

	"merchantpay/ent"
)

// Booked is a deposit Receive booked.
type Booked struct {
	Transaction *ent.Transaction
	// RefDropped says why the narration's merchant reference was not kept
	// on an accepted deposit (Transfer.NoRefund only); empty when it was
	// kept or there was none.
	RefDropped string
}

// NotCredited is ReceiveInflow's error for a transfer the rails cannot send
// back that the account's rules refuse (a closed or expired account, an
// amount the criteria reject, an amount that does not cover the deposit
// fee): nothing is booked, and the money stays with the provider until an
// operator settles it by hand.
type NotCredited struct {
	// Reason is why the account's rules refuse it.
	Reason string
}

func (e *NotCredited) Error() string { return "deposits: inflow not credited: " + e.Reason }

// ReceiveInflow books a live provider's inflow as Receive does, with
// tr.NoRefund telling whether the provider can send money back. A provider
// that cannot never sees a deposit booked as refunded (the merchant would
// be told of a refund nobody made):
//   - a narration reference that cannot be kept (taken already, or of the
//     form of the service's own references) is dropped and the deposit
//     credited without it, the narration kept as it is; Booked.RefDropped
//     says why;
//   - any other refusal of the account's rules is a *NotCredited error and
//     nothing is written.
func (s *Service) ReceiveInflow(ctx context.Context, tx *ent.Tx, tr Transfer) (Booked, error) {
	return s.receive(ctx, tx, tr)
}
