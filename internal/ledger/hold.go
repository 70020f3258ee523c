package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"merchantpay/ent"
	"merchantpay/ent/balanceslot"
	"merchantpay/ent/ledgeraccount"
	"merchantpay/internal/store"
)

// A Hold is a merchant's available balance in one currency, locked by a
// transaction for a batch of payouts: its row and every slot of it (in
// that order, as rebalance locks them) until the commit.
type Hold struct {
	acct      Account
	available int64 // the row's and the slots'
	slots     int64 // the slots' part
}

// Hold locks a's balance in the transaction carried by ctx (see Hold). An
// account never credited holds nothing. On PostgreSQL the row is locked
// and its slots summed in one statement; only when they hold something
// are they locked too, in a second one. Slots that hold nothing stay so
// while the row is locked: only rebalance, which locks the row first,
// puts money in them.
func (s *Service) Hold(ctx context.Context, a Account) (*Hold, error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	h := &Hold{acct: a}
	if s.db.IsPostgres() {
		rows, err := s.db.Client(ctx).QueryContext(ctx, `SELECT a.`+ledgeraccount.FieldAvailable+`,
				COALESCE((SELECT sum(s.`+balanceslot.FieldAvailable+`) FROM `+balanceslot.Table+` s WHERE s.`+balanceslot.FieldAccountID+` = a.`+ledgeraccount.FieldID+`), 0)
			FROM `+ledgeraccount.Table+` a WHERE a.`+ledgeraccount.FieldID+` = $1 FOR UPDATE OF a`, a.ID())
		if err != nil {
			return nil, store.Classify(fmt.Errorf("ledger: hold %s: %w", a.ID(), err))
		}
		var row, slots int64
		found := rows.Next()
		if found {
			err = rows.Scan(&row, &slots)
		}
		if err = errors.Join(err, rows.Err(), rows.Close()); err != nil {
			return nil, store.Classify(fmt.Errorf("ledger: hold %s: %w", a.ID(), err))
		}
		if !found {
			return h, nil
		}
		if slots == 0 {
			h.available = row
			return h, nil
		}
	}
	acc, slots, err := s.lockBalance(ctx, s.db.Client(ctx), a.ID())
	if ent.IsNotFound(err) {
		return h, nil
	}
	if err != nil {
		return nil, err
	}
	h.available = acc.Available
	for _, sl := range slots {
		h.slots += sl.Available
	}
	h.available += h.slots
	return h, nil
}

// Available is what the held balance holds.
func (h *Hold) Available() int64 { return h.available }

// PayoutAll writes postings, each one decrease of h's balance (payouts to
// the service's own accounts), whose sum h covers (the caller decided who
// fits), with rows (INSERTs the caller built, each writing Stmt.Rows
// rows), in the transaction that holds h. On PostgreSQL it is one
// statement: rows and entries in its WITH clauses, the slots gathered
// into the row, and the row set to what is left. On SQLite, rows and then
// PostAll.
func (s *Service) PayoutAll(ctx context.Context, h *Hold, postings []Posting, rows []store.Stmt) error {
	var total int64
	entries := 0
	for i := range postings {
		p := &postings[i]
		p.Entries = append([]Entry(nil), p.Entries...)
		deltas, err := plan(p)
		if err != nil {
			return err
		}
		if len(deltas) != 1 || deltas[0].acct.ID() != h.acct.ID() || deltas[0].available >= 0 || deltas[0].pending != 0 {
			return fmt.Errorf("%w: posting %q is not a payout from %s", ErrInvalid, p.ID, h.acct.ID())
		}
		total -= deltas[0].available
		entries += len(p.Entries)
	}
	if total > h.available {
		return fmt.Errorf("%w: payouts of %d from a balance of %d", ErrInvalid, total, h.available)
	}
	if !s.db.IsPostgres() {
		for _, st := range rows {
			if err := store.ExecRows(ctx, st); err != nil {
				return err
			}
		}
		_, err := s.PostAll(ctx, postings)
		return err
	}
	now := s.clock.Now()
	for i := range postings {
		postings[i].CreatedAt = now
	}
	ctes, wrote, args := store.CTEs(rows)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var b strings.Builder
	b.WriteString("WITH ")
	if ctes != "" {
		b.WriteString(ctes + ", ")
	}
	b.WriteString("e AS (" + entriesInsert(postings, now, arg) + " RETURNING 1)")
	if h.slots != 0 {
		b.WriteString(", g AS (UPDATE " + balanceslot.Table + " SET " + balanceslot.FieldAvailable + " = 0, " +
			balanceslot.FieldUpdatedAt + " = " + arg(now) + " WHERE " + balanceslot.FieldAccountID + " = " + arg(h.acct.ID()) +
			" AND " + balanceslot.FieldAvailable + " <> 0 RETURNING 1)")
	}
	b.WriteString(" UPDATE " + ledgeraccount.Table + " SET " + ledgeraccount.FieldAvailable + " = " + arg(h.available-total) +
		", " + ledgeraccount.FieldUpdatedAt + " = " + arg(now) +
		" WHERE " + ledgeraccount.FieldID + " = " + arg(h.acct.ID()) + " AND (SELECT count(*) FROM e) = " + arg(entries))
	if wrote != "" {
		b.WriteString(" AND " + wrote)
	}
	res, err := s.db.Client(ctx).ExecContext(ctx, b.String(), args...)
	if err != nil {
		if store.IsUniqueViolation(err) {
			return err // the caller knows which of its rows could collide
		}
		return store.Classify(fmt.Errorf("ledger: payouts from %s: %w", h.acct.ID(), err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return store.ErrWroteNothing
	}
	h.available -= total
	h.slots = 0
	return nil
}
