package ledger

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/ledgeraccount"
	"merchantpay/ent/ledgerentry"
	"merchantpay/internal/money"
	"merchantpay/internal/store"
)

// delta is the net change of one tracking account in one posting.
type delta struct {
	acct               Account
	available, pending int64
}

// plan validates p and nets its entries per tracking account.
func plan(p *Posting) ([]*delta, error) {
	if len(p.Entries) < 2 {
		return nil, fmt.Errorf("%w: posting %q needs at least two entries", ErrInvalid, p.ID)
	}
	sums := map[money.Currency]int64{}
	byID := map[string]*delta{}
	var mode string
	for i := range p.Entries {
		e := &p.Entries[i]
		if e.Bucket == "" {
			e.Bucket = Available
		}
		if err := e.Account.validate(); err != nil {
			return nil, err
		}
		if !e.Bucket.valid() {
			return nil, fmt.Errorf("%w: bucket %q", ErrInvalid, e.Bucket)
		}
		if e.Amount == 0 || e.Amount == math.MinInt64 {
			return nil, fmt.Errorf("%w: entry %d of posting %q has amount %d", ErrInvalid, i, p.ID, e.Amount)
		}
		// Test money must never reach a live account.
		if mode == "" {
			mode = e.Account.Mode
		} else if e.Account.Mode != mode {
			return nil, fmt.Errorf("%w: posting %q mixes modes %s and %s", ErrInvalid, p.ID, mode, e.Account.Mode)
		}
		var ok bool
		if sums[e.Account.Currency], ok = add(sums[e.Account.Currency], e.Amount); !ok {
			return nil, fmt.Errorf("%w: posting %q overflows", ErrInvalid, p.ID)
		}
		if !e.Account.TracksBalance() {
			continue
		}
		id := e.Account.ID()
		d := byID[id]
		if d == nil {
			d = &delta{acct: e.Account}
			byID[id] = d
		}
		target := &d.available
		if e.Bucket == Pending {
			target = &d.pending
		}
		if *target, ok = add(*target, e.Amount); !ok {
			return nil, fmt.Errorf("%w: posting %q overflows", ErrInvalid, p.ID)
		}
	}
	for c, sum := range sums {
		if sum != 0 {
			return nil, fmt.Errorf("%w: posting %q: %s sums to %s", ErrUnbalanced, p.ID, c, money.Format(sum, c))
		}
	}
	out := make([]*delta, 0, len(byID))
	for _, d := range byID {
		if d.available != 0 || d.pending != 0 {
			out = append(out, d)
		}
	}
	// By account id, the one order in which every transaction locks
	// balance rows (PostAll keeps it across postings): two postings that
	// locked rows in opposite orders deadlocked on PostgreSQL (a swap
	// USDT→NGN raises NGN and lowers USDT; one NGN→USDT the reverse). A
	// posting with a single balance change, such as a withdrawal's debit,
	// still locks its row last, after its entries.
	sort.Slice(out, func(i, j int) bool { return out[i].acct.ID() < out[j].acct.ID() })
	return out, nil
}

func add(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// Post writes p in tx, the caller's transaction handed to it as an argument
// (with tx nil, in one of its own): one bulk
// insert of the entries, then the balance changes of tracking accounts,
// creating a merchant's account on its first credit. A decrease the balance
// cannot cover fails with apperr.InsufficientBalance; the caller's
// transaction must then roll back (returning the error from db.Within does),
// since the entries were already inserted. It returns p with ID and
// CreatedAt set.
func (s *Service) Post(ctx context.Context, tx *ent.Tx, p Posting) (Posting, error) {
	ps, err := s.PostAll(ctx, tx, []Posting{p})
	if err != nil {
		return Posting{}, err
	}
	return ps[0], nil
}

// maxEntriesPerInsert keeps one insert's parameters (9 per entry) well
// under both databases' limits.
const maxEntriesPerInsert = 1000

// PostAll writes postings as Post writes one, in one transaction (tx, or
// one of its own when tx is nil): the
// entries of all of them in one insert (workers settling a batch), then
// each posting's balance changes in order. It fails as a whole: a
// duplicate posting id fails with ErrDuplicatePosting naming the first.
func (s *Service) PostAll(ctx context.Context, tx *ent.Tx, postings []Posting) ([]Posting, error) {
	out, plans, err := planAll(postings)
	if err != nil {
		return nil, err
	}
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		return s.postAll(ctx, tx.Client(), out, plans)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// planAll gives each of postings its ID when it has none and plans its
// balance changes.
func planAll(postings []Posting) ([]Posting, [][]*delta, error) {
	out := make([]Posting, len(postings))
	plans := make([][]*delta, len(postings))
	for i, p := range postings {
		if p.ID == "" {
			p.ID = uuid.NewString()
		}
		p.Entries = append([]Entry(nil), p.Entries...)
		deltas, err := plan(&p)
		if err != nil {
			return nil, nil, err
		}
		out[i], plans[i] = p, deltas
	}
	return out, plans, nil
}

// postAll writes out, planned as plans, through c, the client of the
// caller's transaction, setting each posting's CreatedAt.
func (s *Service) postAll(ctx context.Context, c *ent.Client, out []Posting, plans [][]*delta) error {
	now := s.clock.Now()
	if d := onlyLower(plans); d != nil && s.db.IsPostgres() && entryCount(out) <= maxEntriesPerInsert {
		return s.postAndLower(ctx, c, out, d, now)
	}
	var rows []*ent.LedgerEntryCreate
	for i := range out {
		p := &out[i]
		p.CreatedAt = now
		for j, e := range p.Entries {
			rows = append(rows, c.LedgerEntry.Create().SetPostingID(p.ID).SetSeq(j).
				SetAccountID(e.Account.ID()).SetCurrency(string(e.Account.Currency)).
				SetBucket(string(e.Bucket)).SetAmount(e.Amount).
				SetTransactionRef(p.TransactionRef).SetMemo(p.Memo).SetCreatedAt(now))
		}
	}
	for len(rows) > 0 {
		n := min(len(rows), maxEntriesPerInsert)
		if err := c.LedgerEntry.CreateBulk(rows[:n]...).Exec(ctx); err != nil {
			if store.IsUniqueViolation(err) {
				return duplicatePosting(out)
			}
			return store.Classify(fmt.Errorf("ledger: insert entries: %w", err))
		}
		rows = rows[n:]
	}
	// Every posting's balance changes in account id order across the
	// batch (a worker settling postings of many merchants), each
	// account's in posting order.
	var all []*delta
	for _, deltas := range plans {
		all = append(all, deltas...)
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].acct.ID() < all[j].acct.ID() })
	for _, d := range all {
		if d.available >= 0 && d.pending >= 0 {
			if err := s.raise(ctx, c, d, now); err != nil {
				return err
			}
			continue
		}
		if err := s.lower(ctx, c, d, now); err != nil {
			return err
		}
	}
	return nil
}

// onlyLower is the one balance change of plans when there is exactly one
// and it is a decrease (a merchant paying out, or paying for a swap, to the
// service's own accounts), else nil.
func onlyLower(plans [][]*delta) *delta {
	var only *delta
	for _, deltas := range plans {
		for _, d := range deltas {
			if only != nil {
				return nil
			}
			only = d
		}
	}
	if only == nil || (only.available >= 0 && only.pending >= 0) {
		return nil
	}
	return only
}

// postAndLower writes postings whose only balance change is the decrease d
// in one statement on PostgreSQL (entriesFirst): the entries' INSERT in a
// WITH clause, then d's conditional UPDATE of the account's row (the hot
// row's lock last, as in Post), checked by rows affected as lower checks its
// own. When the row alone falls short, rebalance gathers the slots into it,
// in the same transaction.
func (s *Service) postAndLower(ctx context.Context, c *ent.Client, postings []Posting, d *delta, now time.Time) error {
	w := newEntriesFirst(nil, postings, now)
	w.sql.WriteString(" UPDATE " + ledgeraccount.Table + " SET " + ledgeraccount.FieldUpdatedAt + " = " + w.arg(now))
	if d.available != 0 {
		w.sql.WriteString(", " + ledgeraccount.FieldAvailable + " = " + ledgeraccount.FieldAvailable + " + " + w.arg(d.available))
	}
	if d.pending != 0 {
		w.sql.WriteString(", " + ledgeraccount.FieldPending + " = " + ledgeraccount.FieldPending + " + " + w.arg(d.pending))
	}
	w.sql.WriteString(" WHERE " + w.guard() + " AND " + ledgeraccount.FieldID + " = " + w.arg(d.acct.ID()))
	if d.available < 0 {
		w.sql.WriteString(" AND " + ledgeraccount.FieldAvailable + " >= " + w.arg(-d.available))
	}
	if d.pending < 0 {
		w.sql.WriteString(" AND " + ledgeraccount.FieldPending + " >= " + w.arg(-d.pending))
	}
	res, err := c.ExecContext(ctx, w.sql.String(), w.args...)
	if err != nil {
		if store.IsUniqueViolation(err) {
			return duplicatePosting(postings)
		}
		return store.Classify(fmt.Errorf("ledger: post and debit %s: %w", d.acct.ID(), err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 1 {
		return nil
	}
	return s.rebalance(ctx, c, d, now, false)
}

// entriesInsert is the INSERT of postings' entries, its values added
// through arg.
func entriesInsert(postings []Posting, now time.Time, arg func(any) string) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + ledgerentry.Table + " (" + strings.Join([]string{
		ledgerentry.FieldPostingID, ledgerentry.FieldSeq, ledgerentry.FieldAccountID, ledgerentry.FieldCurrency,
		ledgerentry.FieldBucket, ledgerentry.FieldAmount, ledgerentry.FieldTransactionRef, ledgerentry.FieldMemo,
		ledgerentry.FieldCreatedAt}, ", ") + ") VALUES ")
	first := true
	for _, p := range postings {
		for j, e := range p.Entries {
			if !first {
				b.WriteString(", ")
			}
			first = false
			b.WriteString("(" + strings.Join([]string{arg(p.ID), arg(j), arg(e.Account.ID()), arg(string(e.Account.Currency)),
				arg(string(e.Bucket)), arg(e.Amount), arg(p.TransactionRef), arg(p.Memo), arg(now)}, ", ") + ")")
		}
	}
	return b.String()
}

// duplicatePosting is the error of an insert of postings' entries that a
// unique index refused: a posting id was used before.
func duplicatePosting(postings []Posting) error {
	if len(postings) == 1 {
		return fmt.Errorf("%w: %q", ErrDuplicatePosting, postings[0].ID)
	}
	ids := make([]string, len(postings))
	for i, p := range postings {
		ids[i] = p.ID
	}
	return fmt.Errorf("%w: one of %q", ErrDuplicatePosting, ids)
}
