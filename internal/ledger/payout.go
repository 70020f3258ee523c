package ledger

import (
	"context"
	"errors"
	"fmt"

	"merchantpay/ent"
	"merchantpay/ent/balanceslot"
	"merchantpay/internal/store"
)

// Payout writes p, a posting whose one balance change lowers a merchant's
// available balance (a withdrawal's debit), together with rows: INSERTs
// the caller built, each writing exactly one row (the withdrawal's row and
// its event), in tx, the caller's transaction (with tx nil, in one of its
// own). It must be the last balance change of that transaction: the slot
// it takes stays locked until the commit. Each of rows writes Stmt.Rows
// rows.
//
// On PostgreSQL it is one statement after a SAVEPOINT: rows and the
// entries are inserted in its WITH clauses, then the amount is taken from
// the next slot of the balance in turn, if it covers it (see the package
// comment). When no such slot exists, the
// transaction rolls back to the savepoint, writes rows and entries again,
// and rebalance takes the amount from the whole balance. On SQLite the rows, the entries and
// the account's conditional UPDATE are statements of their own.
//
// Errors: apperr.InsufficientBalance when the balance cannot cover p, and
// the transaction must roll back (rows and entries were written); a unique
// index's refusal of one of rows or of p's entries as the database gave it
// (store.IsUniqueViolation), for the caller, who knows which rows could
// collide, to name; store.ErrWroteNothing when one of rows wrote nothing.
func (s *Service) Payout(ctx context.Context, tx *ent.Tx, p Posting, rows []store.Stmt) (Posting, error) {
	out, plans, err := planAll([]Posting{p})
	if err != nil {
		return Posting{}, err
	}
	p, deltas := out[0], plans[0]
	if len(deltas) != 1 || deltas[0].acct.Kind != Main || deltas[0].available >= 0 || deltas[0].pending != 0 {
		return Posting{}, fmt.Errorf("%w: posting %q is not a payout: one decrease of a merchant's available balance", ErrInvalid, p.ID)
	}
	d := deltas[0]
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		if !s.db.IsPostgres() {
			for _, st := range rows {
				if err := store.ExecRows(ctx, tx, st); err != nil {
					return err
				}
			}
			if err := s.postAll(ctx, tx.Client(), out, plans); err != nil {
				return err
			}
			p = out[0]
			return nil
		}
		p.CreatedAt = s.clock.Now()
		// An UPDATE that waited for a slot keeps it locked even when its
		// condition then fails; a transaction holding a slot must not wait
		// for the row (a rebalance holding the row may wait for that
		// slot). A refused take therefore rolls back to here, which
		// releases the slot, before the whole balance is taken.
		if _, err := tx.ExecContext(ctx, "SAVEPOINT payout"); err != nil {
			return store.Classify(fmt.Errorf("ledger: payout: %w", err))
		}
		taken, err := s.writeAndTake(ctx, tx, p, d, rows, true)
		if err != nil || taken {
			return err
		}
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT payout"); err != nil {
			return store.Classify(fmt.Errorf("ledger: payout: %w", err))
		}
		if _, err := s.writeAndTake(ctx, tx, p, d, rows, false); err != nil {
			return err
		}
		return s.rebalance(ctx, tx.Client(), d, p.CreatedAt, true)
	})
	if err != nil {
		return Posting{}, err
	}
	return p, nil
}

// writeAndTake writes rows and p's entries in tx and, with take, lowers the
// next slot of d's account in turn (nextSlot) if it covers d, in one statement;
// taken is false when it does not (rows and entries are written all the
// same). The UPDATE's condition reads every inserted row, so that all of
// them are written before the slot is locked. It waits for a slot another
// transaction holds: that one waits for nothing while holding it.
func (s *Service) writeAndTake(ctx context.Context, tx *ent.Tx, p Posting, d *delta, rows []store.Stmt, take bool) (taken bool, err error) {
	w := newEntriesFirst(rows, []Posting{p}, p.CreatedAt)
	if take {
		amount := w.arg(-d.available)
		w.sql.WriteString(", u AS (UPDATE " + balanceslot.Table + " SET " + balanceslot.FieldAvailable + " = " +
			balanceslot.FieldAvailable + " - " + amount + ", " + balanceslot.FieldUpdatedAt + " = " + w.arg(p.CreatedAt) +
			" WHERE " + balanceslot.FieldID + " = " + w.arg(slotID(d.acct.ID(), s.nextSlot())) +
			" AND " + balanceslot.FieldAvailable + " >= " + amount + " AND " + w.guard() +
			" RETURNING 1) SELECT (SELECT count(*) FROM u)")
	} else {
		w.sql.WriteString(" SELECT (SELECT count(*) FROM e)")
	}
	// Rows that wrote nothing leave the slot alone: tell that apart.
	w.sql.WriteString(", " + w.rowsWritten())
	var n int
	var allWritten bool
	res, err := tx.QueryContext(ctx, w.sql.String(), w.args...)
	if err == nil {
		if res.Next() {
			err = res.Scan(&n, &allWritten)
		}
		err = errors.Join(err, res.Err(), res.Close())
	}
	if err != nil {
		if store.IsUniqueViolation(err) {
			return false, err
		}
		return false, store.Classify(fmt.Errorf("ledger: payout from %s: %w", d.acct.ID(), err))
	}
	if !allWritten {
		return false, store.ErrWroteNothing
	}
	return take && n == 1, nil
}
