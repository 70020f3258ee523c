// Package ledger is the double-entry ledger: every balance change is a
// posting whose entries sum to zero per currency. Merchants' main accounts
// keep their available and pending balances up to date; a decrease is a
// conditional UPDATE (... WHERE available >= x) checked by rows affected,
// done last in the posting so the row lock is held as briefly as possible,
// and it cannot overdraw under any concurrency on SQLite or PostgreSQL. The
// service's own accounts keep no stored balance (see Account.TracksBalance).
// Corrections are reversals, never edits.
//
// Slots. Every payout of a merchant in one currency debits the same
// balance, and a row's lock is held until the commit: one row would queue
// all of them. On PostgreSQL a payout's debit (a Posting marked Last) made
// in a keyed request's last round trip (it carries the request's
// preludes) therefore takes its amount from one of Slots rows
// (BalanceSlot) that hold parts of the available balance, picked in turn;
// an account's available balance is its row's column plus its slots. A
// slot that cannot cover the debit fails the transaction, and the request
// runs again (idem, store.Rerun): that run locks the row and every slot
// (rebalance), refuses only when their sum falls short, and spreads what
// is left evenly over them again. Every other change works on the
// account's row: a payout's debit outside a keyed request spreads the
// balance when the row falls short, any other decrease gathers the slots
// into the row. Rows are locked in one order: accounts by id, and within
// an account its row before its slots, by id. A transaction that takes a
// slot takes nothing after it and never waits while holding it.
package ledger

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/balanceslot"
	"merchantpay/ent/ledgeraccount"
	"merchantpay/ent/ledgerentry"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// Errors of postings that are bugs in the caller, not client mistakes: they
// surface as INTERNAL_ERROR. Insufficient funds is apperr.InsufficientBalance.
var (
	// ErrInvalid: a malformed posting or account.
	ErrInvalid = errors.New("ledger: invalid posting")
	// ErrUnbalanced: entries that do not sum to zero per currency.
	ErrUnbalanced = errors.New("ledger: entries do not sum to zero")
	// ErrDuplicatePosting: the posting id was already used.
	ErrDuplicatePosting = errors.New("ledger: posting id already used")
	// ErrNotFound: Reverse of a posting that does not exist.
	ErrNotFound = errors.New("ledger: no such posting")
	// ErrAlreadyReversed: Reverse of a posting that was reversed before.
	ErrAlreadyReversed = errors.New("ledger: posting already reversed")
)

// Entry is one leg of a posting.
type Entry struct {
	Account Account
	// Bucket is Available when empty. The service's own accounts have no
	// stored balances, so their bucket only labels the entry.
	Bucket Bucket
	// Amount is in minor units of Account.Currency, signed: positive raises
	// the account's balance, negative lowers it. Never zero.
	Amount int64
}

// Posting is a set of entries that sum to zero per currency, written
// together or not at all.
type Posting struct {
	// ID is unique among postings; empty means a new UUID. A deterministic
	// id ("<transaction ref>:<step>") makes a repeated posting fail with
	// ErrDuplicatePosting instead of moving money twice.
	ID             string
	TransactionRef string
	Memo           string
	Entries        []Entry
	// CreatedAt is set by Post from the clock.
	CreatedAt time.Time
	// Last promises that the transaction changes no balance after this
	// posting (a withdrawal's debit): on PostgreSQL, a posting whose one
	// balance change lowers a merchant's available balance may then take
	// it from one of the balance's slots (see the package comment).
	Last bool
}

// Slots is how many slot rows a merchant's available balance may be
// spread over, besides its account's row.
const Slots = 8

// slotID is the id of an account's slot n (1 to Slots); ids sort in slot
// order.
func slotID(accountID string, n int) string { return accountID + "#" + strconv.Itoa(n) }

// Service posts to the ledger and reads balances.
type Service struct {
	db    *store.DB
	clock clock.Clock
	// turn picks the slot of the next payout's debit.
	turn atomic.Uint32
	// shares holds, by account id, what each slot got at the account's
	// last rebalance in this process (0 once gathered): a payout larger
	// than that skips the slot it would not find covered.
	shares sync.Map
	// simulations says in which modes Fund exists.
	simulations rails.Simulations
}

// New returns the ledger; sim says in which modes the sandbox's Fund
// exists.
func New(db *store.DB, c clock.Clock, sim rails.Simulations) *Service {
	return &Service{db: db, clock: c, simulations: sim}
}

// nextSlot is the slot of the next payout's debit: in turn, so that
// concurrent payouts of one balance take different rows.
func (s *Service) nextSlot() int { return int(s.turn.Add(1)%Slots) + 1 }

// slotMayCover reports whether a slot of d's account may cover d, as far
// as this process knows: not when the account's last rebalance here left
// each slot less (a merchant paying out large parts of its balance goes
// straight to rebalance, not through a refused slot and a second run).
func (s *Service) slotMayCover(d *delta) bool {
	v, ok := s.shares.Load(d.acct.ID())
	return !ok || v.(int64) >= -d.available
}

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

// Post writes p in the transaction carried by ctx (or its own): one bulk
// insert of the entries, then the balance changes of tracking accounts,
// creating a merchant's account on its first credit. A decrease the balance
// cannot cover fails with apperr.InsufficientBalance; the caller's
// transaction must then roll back (returning the error from db.Tx does),
// since the entries were already inserted. It returns p with ID and
// CreatedAt set.
func (s *Service) Post(ctx context.Context, p Posting) (Posting, error) {
	ps, err := s.PostAll(ctx, []Posting{p})
	if err != nil {
		return Posting{}, err
	}
	return ps[0], nil
}

// maxEntriesPerInsert keeps one insert's parameters (9 per entry) well
// under both databases' limits.
const maxEntriesPerInsert = 1000

// PostAll writes postings as Post writes one, in one transaction: the
// entries of all of them in one insert (workers settling a batch), then
// each posting's balance changes in order. It fails as a whole: a
// duplicate posting id fails with ErrDuplicatePosting naming the first.
func (s *Service) PostAll(ctx context.Context, postings []Posting) ([]Posting, error) {
	out := make([]Posting, len(postings))
	plans := make([][]*delta, len(postings))
	for i, p := range postings {
		if p.ID == "" {
			p.ID = uuid.NewString()
		}
		p.Entries = append([]Entry(nil), p.Entries...)
		deltas, err := plan(&p)
		if err != nil {
			return nil, err
		}
		out[i], plans[i] = p, deltas
	}
	err := s.db.Tx(ctx, func(ctx context.Context) error {
		c := s.db.Client(ctx)
		now := s.clock.Now()
		entries := 0
		for _, p := range out {
			entries += len(p.Entries)
		}
		d := onlyLower(plans)
		// A payout's debit (see the package comment). One that would take
		// a slot (it carries preludes) spreads the balance at once when it
		// was refused before (Rerun) or no slot would cover it.
		payout := d != nil && s.db.IsPostgres() && len(out) == 1 && out[0].Last && d.acct.Kind == Main && d.pending == 0
		spreadNow := payout && (store.Rerun(ctx) || (store.HasPreludes(ctx) && !s.slotMayCover(d)))
		if d != nil && s.db.IsPostgres() && entries <= maxEntriesPerInsert && !spreadNow {
			return s.postAndLower(ctx, c, out, entries, d, now, payout)
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
			if spreadNow {
				if err := s.rebalance(ctx, c, d, now, true); err != nil {
					return err
				}
				continue
			}
			if err := s.lower(ctx, c, d, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

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
	s.shares.Store(a.ID(), share) // kept even if the transaction rolls back: a hint
	return nil
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
// in one statement on PostgreSQL: the entries' INSERT in a WITH clause,
// then d's conditional UPDATE (the hot row's lock last, as in Post),
// checked by rows affected as lower checks its own; entries is how many
// the postings hold. Refused, the entries are in the transaction all the
// same, which the caller rolls back (as after lower).
//
// The preludes of ctx's transaction (store.Prelude: its event, a keyed
// request's stored answer) ride in the same statement, written before the
// balance row is locked; should one write nothing, the debit is not made
// either, and the error fails the transaction (which a keyed request then
// runs again with nothing put off).
func (s *Service) postAndLower(ctx context.Context, c *ent.Client, postings []Posting, entries int, d *delta, now time.Time, payout bool) error {
	ctes, preludesWrote, args := store.WithPreludes(store.TakePreludes(ctx))
	// A payout's debit carrying preludes takes its amount from a slot (see
	// the package comment; both tables name their columns alike). Its
	// refusal fails the whole transaction, which releases the slot: an
	// UPDATE that waited for a row keeps it locked even when its condition
	// then fails, and a transaction holding a slot must not go on to lock
	// the account's row (the order is the row, then its slots).
	table, id := ledgeraccount.Table, d.acct.ID()
	if payout && preludesWrote != "" {
		table, id = balanceslot.Table, slotID(id, s.nextSlot())
	}
	var b strings.Builder
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	b.WriteString("WITH ")
	if ctes != "" {
		b.WriteString(ctes + ", ")
	}
	b.WriteString("e AS (INSERT INTO " + ledgerentry.Table + " (" + strings.Join([]string{
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
	// The UPDATE's condition reads every inserted entry: PostgreSQL runs
	// a WITH clause nobody reads after the main statement, which would
	// insert the entries while holding the balance row's lock.
	b.WriteString(" RETURNING 1) UPDATE " + table + " SET " + ledgeraccount.FieldUpdatedAt + " = " + arg(now))
	if d.available != 0 {
		b.WriteString(", " + ledgeraccount.FieldAvailable + " = " + ledgeraccount.FieldAvailable + " + " + arg(d.available))
	}
	if d.pending != 0 {
		b.WriteString(", " + ledgeraccount.FieldPending + " = " + ledgeraccount.FieldPending + " + " + arg(d.pending))
	}
	b.WriteString(" WHERE (SELECT count(*) FROM e) = " + arg(entries) + " AND " + ledgeraccount.FieldID + " = " + arg(id))
	if preludesWrote != "" {
		b.WriteString(" AND " + preludesWrote)
	}
	if d.available < 0 {
		b.WriteString(" AND " + ledgeraccount.FieldAvailable + " >= " + arg(-d.available))
	}
	if d.pending < 0 {
		b.WriteString(" AND " + ledgeraccount.FieldPending + " >= " + arg(-d.pending))
	}
	res, err := c.ExecContext(ctx, b.String(), args...)
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
	} else if preludesWrote != "" {
		// The balance or a prelude refused: the caller runs again without
		// preludes, which tells the two apart.
		return fmt.Errorf("ledger: debit of %s refused, or one of its preludes wrote nothing", id)
	}
	return s.rebalance(ctx, c, d, now, payout)
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

func (s *Service) pair(p Posting, a, b Entry) (Posting, error) {
	if len(p.Entries) != 0 {
		return Posting{}, fmt.Errorf("%w: the helpers build the entries themselves", ErrInvalid)
	}
	if a.Amount >= 0 {
		return Posting{}, fmt.Errorf("%w: amount must be positive", ErrInvalid)
	}
	p.Entries = []Entry{a, b}
	return p, nil
}

// Credit moves amount (minor units, > 0) from the service's account of kind
// `from` to t's available balance in currency c. p gives the posting's ID,
// TransactionRef and Memo; its Entries must be empty.
func (s *Service) Credit(ctx context.Context, p Posting, t tenant.Tenant, from Kind, c money.Currency, amount int64) (Posting, error) {
	p, err := s.pair(p,
		Entry{Account: SystemAccount(t.Mode, c, from), Bucket: Available, Amount: -amount},
		Entry{Account: MerchantAccount(t, c), Bucket: Available, Amount: amount})
	if err != nil {
		return Posting{}, err
	}
	return s.Post(ctx, p)
}

// Debit moves amount (minor units, > 0) from t's available balance in
// currency c to the service's account of kind `to`; apperr.InsufficientBalance
// when the balance cannot cover it.
func (s *Service) Debit(ctx context.Context, p Posting, t tenant.Tenant, to Kind, c money.Currency, amount int64) (Posting, error) {
	p, err := s.pair(p,
		Entry{Account: MerchantAccount(t, c), Bucket: Available, Amount: -amount},
		Entry{Account: SystemAccount(t.Mode, c, to), Bucket: Available, Amount: amount})
	if err != nil {
		return Posting{}, err
	}
	return s.Post(ctx, p)
}

// Move moves amount (minor units, > 0) between t's buckets in currency c:
// Available→Pending holds funds, Pending→Available releases them.
// apperr.InsufficientBalance when the source bucket cannot cover it.
func (s *Service) Move(ctx context.Context, p Posting, t tenant.Tenant, c money.Currency, from, to Bucket, amount int64) (Posting, error) {
	if from == to {
		return Posting{}, fmt.Errorf("%w: move from %s to itself", ErrInvalid, from)
	}
	acct := MerchantAccount(t, c)
	p, err := s.pair(p, Entry{Account: acct, Bucket: from, Amount: -amount}, Entry{Account: acct, Bucket: to, Amount: amount})
	if err != nil {
		return Posting{}, err
	}
	return s.Post(ctx, p)
}

// ReversalID is the id of the posting that reverses postingID; being
// deterministic, it lets a posting be reversed at most once.
func ReversalID(postingID string) string { return postingID + ":reversal" }

// Reverse posts the exact opposite of posting postingID (same accounts and
// buckets, negated amounts, same transaction reference) under
// ReversalID(postingID), in the transaction carried by ctx (or its own).
// ErrNotFound when there is no such posting, ErrAlreadyReversed when it was
// reversed before, apperr.InsufficientBalance when a merchant's balance no
// longer covers taking back a credit.
func (s *Service) Reverse(ctx context.Context, postingID, memo string) (Posting, error) {
	revID := ReversalID(postingID)
	var out Posting
	err := s.db.Tx(ctx, func(ctx context.Context) error {
		rows, err := s.db.Client(ctx).LedgerEntry.Query().
			Where(ledgerentry.PostingIDIn(postingID, revID)).
			Order(ent.Asc(ledgerentry.FieldSeq)).All(ctx)
		if err != nil {
			return store.Classify(fmt.Errorf("ledger: read posting %q: %w", postingID, err))
		}
		rev := Posting{ID: revID, Memo: memo}
		for _, r := range rows {
			if r.PostingID == revID {
				return fmt.Errorf("%w: %q", ErrAlreadyReversed, postingID)
			}
			acct, err := ParseAccountID(r.AccountID)
			if err != nil {
				return err
			}
			rev.TransactionRef = r.TransactionRef
			rev.Entries = append(rev.Entries, Entry{Account: acct, Bucket: Bucket(r.Bucket), Amount: -r.Amount})
		}
		if len(rev.Entries) == 0 {
			return fmt.Errorf("%w: %q", ErrNotFound, postingID)
		}
		if rev.Memo == "" {
			rev.Memo = "reversal of " + postingID
		}
		out, err = s.Post(ctx, rev)
		if errors.Is(err, ErrDuplicatePosting) {
			return fmt.Errorf("%w: %q", ErrAlreadyReversed, postingID)
		}
		return err
	})
	if err != nil {
		return Posting{}, err
	}
	return out, nil
}

// Setup creates the rows of the service's own accounts for every mode and
// currency, so operators can list them; postings do not need them. It is
// idempotent and safe to run from several instances at once.
func (s *Service) Setup(ctx context.Context) error {
	now := s.clock.Now()
	return s.db.Tx(ctx, func(ctx context.Context) error {
		c := s.db.Client(ctx)
		var rows []*ent.LedgerAccountCreate
		for _, mode := range []string{tenant.Test, tenant.Live} {
			for _, cur := range money.All() {
				for _, k := range SystemKinds() {
					a := SystemAccount(mode, cur, k)
					rows = append(rows, c.LedgerAccount.Create().SetID(a.ID()).SetOwner(a.Owner).SetMode(mode).
						SetCurrency(string(cur)).SetKind(string(k)).SetTracksBalance(false).
						SetCreatedAt(now).SetUpdatedAt(now))
				}
			}
		}
		err := c.LedgerAccount.CreateBulk(rows...).
			OnConflict(sql.ConflictColumns(ledgeraccount.FieldID)).DoNothing().Exec(ctx)
		return store.Classify(err)
	})
}
