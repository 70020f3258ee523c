package ledger

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"entgo.io/ent/dialect/sql"

	"merchantpay/ent"
	"merchantpay/ent/balanceslot"
	"merchantpay/ent/ledgeraccount"
	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
	"merchantpay/internal/store"
)

// raise adds non-negative amounts to an account, creating it if needed, in
// one statement (INSERT ... ON CONFLICT (id) DO UPDATE).
func (s *Service) raise(ctx context.Context, c *ent.Client, d *delta, now time.Time) error {
	a := d.acct
	if err := s.fits(ctx, c, d); err != nil {
		return err
	}
	conflict := []sql.ConflictOption{sql.ConflictColumns(ledgeraccount.FieldID)}
	if s.db.IsPostgres() && d.available > 0 {
		// The row's own column cannot pass an int64 (PostgreSQL refuses
		// it); with its slots the balance could, so the update is made
		// only while the whole balance stays within one.
		conflict = append(conflict, sql.UpdateWhere(sql.P(func(b *sql.Builder) {
			b.WriteString(ledgeraccount.Table + "." + ledgeraccount.FieldAvailable + " + ").Arg(d.available).
				WriteString(" + COALESCE((SELECT SUM(s." + balanceslot.FieldAvailable + ") FROM " + balanceslot.Table +
					" AS s WHERE s." + balanceslot.FieldAccountID + " = " + ledgeraccount.Table + "." + ledgeraccount.FieldID +
					"), 0) <= " + strconv.FormatInt(math.MaxInt64, 10))
		})))
	}
	err := c.LedgerAccount.Create().SetID(a.ID()).SetOwner(a.Owner).SetMode(a.Mode).
		SetCurrency(string(a.Currency)).SetKind(string(a.Kind)).SetTracksBalance(true).
		SetAvailable(d.available).SetPending(d.pending).SetCreatedAt(now).SetUpdatedAt(now).
		OnConflict(conflict...).
		Update(func(u *ent.LedgerAccountUpsert) {
			if d.available != 0 {
				u.AddAvailable(d.available)
			}
			if d.pending != 0 {
				u.AddPending(d.pending)
			}
			u.SetUpdatedAt(now)
		}).Exec(ctx)
	if err != nil {
		if store.IsOutOfRange(err) || errors.Is(err, stdsql.ErrNoRows) {
			return balanceLimit(a.Currency) // no row: the update's condition refused
		}
		return store.Classify(fmt.Errorf("ledger: credit %s: %w", a.ID(), err))
	}
	return nil
}

// fits checks on SQLite that d's increases keep its account's balances
// within an int64: SQLite turns an integer sum that overflows into a
// float, which would be stored as the balance. PostgreSQL refuses such a
// sum itself (raise and lower map its error to balanceLimit). The row is
// local: reading it first costs no round trip.
func (s *Service) fits(ctx context.Context, c *ent.Client, d *delta) error {
	if s.db.IsPostgres() || (d.available <= 0 && d.pending <= 0) {
		return nil
	}
	acc, err := c.LedgerAccount.Get(ctx, d.acct.ID())
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return store.Classify(fmt.Errorf("ledger: read %s: %w", d.acct.ID(), err))
	}
	_, okAvailable := add(acc.Available, d.available)
	_, okPending := add(acc.Pending, d.pending)
	if !okAvailable || !okPending {
		return balanceLimit(d.acct.Currency)
	}
	return nil
}

// balanceLimit is the refusal of a credit that would take a balance past
// the largest int64 of minor units.
func balanceLimit(c money.Currency) error {
	var f apperr.Fields
	f.Add("amount", "would take the %s balance past the most it can hold (%s)", c, money.Format(math.MaxInt64, c))
	return f.Err()
}

// lower applies a change that decreases at least one bucket, as one
// conditional UPDATE checked by rows affected. A missing account is a zero
// balance: the update matches no row either.
func (s *Service) lower(ctx context.Context, c *ent.Client, d *delta, now time.Time) error {
	a := d.acct
	if err := s.fits(ctx, c, d); err != nil {
		return err // a pending amount made available
	}
	u := c.LedgerAccount.Update().Where(ledgeraccount.ID(a.ID())).SetUpdatedAt(now)
	if d.available < 0 {
		u.Where(ledgeraccount.AvailableGTE(-d.available))
	}
	if d.pending < 0 {
		u.Where(ledgeraccount.PendingGTE(-d.pending))
	}
	if d.available != 0 {
		u.AddAvailable(d.available)
	}
	if d.pending != 0 {
		u.AddPending(d.pending)
	}
	n, err := u.Save(ctx)
	if store.IsOutOfRange(err) {
		return balanceLimit(a.Currency)
	}
	if err != nil {
		return store.Classify(fmt.Errorf("ledger: debit %s: %w", a.ID(), err))
	}
	if n == 1 {
		return nil
	}
	return s.rebalance(ctx, c, d, now, false)
}

// shortfall is the error of a decrease d that the balance have does not
// cover.
func shortfall(d *delta, have Balance) error {
	a := d.acct
	cur := a.Currency
	if d.available < 0 && have.Available < -d.available {
		return apperr.New(apperr.InsufficientBalance, "insufficient balance: %s %s available, %s %s needed",
			money.Format(have.Available, cur), cur, money.Format(-d.available, cur), cur)
	}
	return apperr.New(apperr.InsufficientBalance, "insufficient pending balance: %s %s pending, %s %s needed",
		money.Format(have.Pending, cur), cur, money.Format(-d.pending, cur), cur)
}
