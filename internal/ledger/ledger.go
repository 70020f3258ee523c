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
// all of them. On PostgreSQL a payout's debit (Payout) therefore takes its
// amount from one of Slots rows (BalanceSlot) that hold parts of the
// available balance, picked in turn. An account's available balance is
// its row's column plus its slots. When that slot does not cover the
// debit, the same transaction rolls back to before it (releasing the
// slot), locks the row and every slot (rebalance), refuses only when their
// sum falls short, and spreads what is left evenly over them again. Every other
// change works on the account's row; a decrease the row cannot cover
// gathers the slots into it. Rows are locked in one order: accounts by id, and
// within an account its row before its slots. A transaction that holds a
// slot waits for no balance row and for no other slot.
package ledger

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect/sql"

	"merchantpay/ent"
	"merchantpay/ent/ledgeraccount"
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
}

// Service posts to the ledger and reads balances.
type Service struct {
	db    *store.DB
	clock clock.Clock
	// turn picks the slot of the next payout's debit.
	turn atomic.Uint32
	// simulations says in which modes Fund exists.
	simulations rails.Simulations
}

// New returns the ledger; sim says in which modes the sandbox's Fund
// exists.
func New(db *store.DB, c clock.Clock, sim rails.Simulations) *Service {
	return &Service{db: db, clock: c, simulations: sim}
}

// Setup creates the rows of the service's own accounts for every mode and
// currency, so operators can list them; postings do not need them. It is
// idempotent and safe to run from several instances at once.
func (s *Service) Setup(ctx context.Context) error {
	now := s.clock.Now()
	return s.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
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
