package ledger

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"entgo.io/ent/dialect/sql"

	"merchantpay/ent"
	"merchantpay/ent/balanceslot"
	"merchantpay/ent/ledgeraccount"
	"merchantpay/internal/store"
)

// Slots is how many slot rows a merchant's available balance may be
// spread over, besides its account's row.
const Slots = 8

// slotID is the id of an account's slot n (1 to Slots); ids sort in slot
// order.
func slotID(accountID string, n int) string { return accountID + "#" + strconv.Itoa(n) }

// nextSlot is the slot of the next payout's debit: in turn, so that
// concurrent payouts of one balance take different rows.
func (s *Service) nextSlot() int { return int(s.turn.Add(1)%Slots) + 1 }

// rebalance applies d, a decrease that the account's row (or, spreading,
// the slot a payout picked) could not cover, to the whole balance: it
// locks the row and then every slot (PostgreSQL; SQLite has one writer),
// and refuses with InsufficientBalance when their sum does not cover d.
// Otherwise what is left of the available balance goes back spread evenly
// over the row and Slots slots (a payout's debit, so that the next ones
// find their slots funded), or gathered into the row (every other change).
func (s *Service) rebalance(ctx context.Context, c *ent.Client, d *delta, now time.Time, spread bool) error {
	a := d.acct
	acc, slots, err := s.lockBalance(ctx, c, a.ID())
	if ent.IsNotFound(err) {
		return shortfall(d, Balance{Currency: a.Currency}) // a currency never held
	}
	if err != nil {
		return err
	}
	have := balanceOf(acc, slots)
	if (d.available < 0 && have.Available < -d.available) || (d.pending < 0 && have.Pending < -d.pending) {
		return shortfall(d, have)
	}
	rest, ok := add(have.Available, d.available)
	if !ok {
		return balanceLimit(a.Currency) // pending made available
	}
	own, share := rest, int64(0)
	if spread {
		share = rest / (Slots + 1)
		own = rest - Slots*share
	}
	n, err := c.LedgerAccount.Update().Where(ledgeraccount.ID(a.ID())).
		SetAvailable(own).AddPending(d.pending).SetUpdatedAt(now).Save(ctx)
	if err == nil && n != 1 {
		err = fmt.Errorf("updated %d rows", n)
	}
	if err != nil {
		return store.Classify(fmt.Errorf("ledger: rebalance %s: %w", a.ID(), err))
	}
	if !spread {
		if have.Available != acc.Available { // something sat in the slots
			err = c.BalanceSlot.Update().Where(balanceslot.AccountID(a.ID()), balanceslot.AvailableNEQ(0)).
				SetAvailable(0).SetUpdatedAt(now).Exec(ctx)
		}
	} else {
		rows := make([]*ent.BalanceSlotCreate, Slots)
		for i := range rows {
			rows[i] = c.BalanceSlot.Create().SetID(slotID(a.ID(), i+1)).SetAccountID(a.ID()).
				SetAvailable(share).SetUpdatedAt(now)
		}
		err = c.BalanceSlot.CreateBulk(rows...).OnConflict(sql.ConflictColumns(balanceslot.FieldID)).
			Update(func(u *ent.BalanceSlotUpsert) { u.UpdateAvailable().UpdateUpdatedAt() }).Exec(ctx)
	}
	if err != nil {
		return store.Classify(fmt.Errorf("ledger: rebalance %s: %w", a.ID(), err))
	}
	return nil
}
