package ledger

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/balanceslot"
	"merchantpay/ent/ledgeraccount"
	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// Balance is a merchant's main balance in one currency, in minor units.
type Balance struct {
	Currency  money.Currency
	Available int64
	Pending   int64
	// UpdatedAt is nil while the balance has never changed.
	UpdatedAt *time.Time
}

// balanceOf is the balance of account a with its slots: their sum cannot
// pass an int64 (raise keeps it within one).
func balanceOf(a *ent.LedgerAccount, slots []*ent.BalanceSlot) Balance {
	t := a.UpdatedAt
	b := Balance{Currency: money.Currency(a.Currency), Available: a.Available, Pending: a.Pending, UpdatedAt: &t}
	for _, s := range slots {
		b.Available += s.Available
		if s.UpdatedAt.After(*b.UpdatedAt) {
			t := s.UpdatedAt
			b.UpdatedAt = &t
		}
	}
	return b
}

// lockBalance reads the account id and its slots, locking them in that
// order on PostgreSQL (SQLite has one writer); ent's NotFoundError when
// there is no account.
func (s *Service) lockBalance(ctx context.Context, c *ent.Client, id string) (*ent.LedgerAccount, []*ent.BalanceSlot, error) {
	q := c.LedgerAccount.Query().Where(ledgeraccount.ID(id))
	sq := c.BalanceSlot.Query().Where(balanceslot.AccountID(id)).Order(ent.Asc(balanceslot.FieldID))
	if s.db.IsPostgres() {
		q.ForUpdate()
		sq.ForUpdate()
	}
	acc, err := q.Only(ctx)
	if err != nil {
		if ent.IsNotFound(err) {
			return nil, nil, err
		}
		return nil, nil, store.Classify(fmt.Errorf("ledger: read %s: %w", id, err))
	}
	slots, err := sq.All(ctx)
	if err != nil {
		return nil, nil, store.Classify(fmt.Errorf("ledger: read the slots of %s: %w", id, err))
	}
	return acc, slots, nil
}

func tenantOf(ctx context.Context) (tenant.Tenant, error) {
	t, ok := tenant.From(ctx)
	if !ok {
		return tenant.Tenant{}, tenant.ErrNoTenant
	}
	return t, nil
}

// Balances returns the ctx tenant's balance in every supported currency, in
// money.All's order, zero for a currency it never held.
func (s *Service) Balances(ctx context.Context) ([]Balance, error) {
	t, err := tenantOf(ctx)
	if err != nil {
		return nil, err
	}
	have, err := s.balances(ctx, s.db.Reader(), t, "")
	if err != nil {
		return nil, err
	}
	out := make([]Balance, 0, len(money.All()))
	for _, c := range money.All() {
		if b, ok := have[c]; ok {
			out = append(out, b)
		} else {
			out = append(out, Balance{Currency: c})
		}
	}
	return out, nil
}

// balance is the ctx tenant's balance in currency c (zero if it never held
// any), read through db, the client of the caller's transaction.
func (s *Service) balance(ctx context.Context, db *ent.Client, c money.Currency) (Balance, error) {
	t, err := tenantOf(ctx)
	if err != nil {
		return Balance{}, err
	}
	have, err := s.balances(ctx, db, t, c)
	if err != nil {
		return Balance{}, err
	}
	if b, ok := have[c]; ok {
		return b, nil
	}
	return Balance{Currency: c}, nil
}

// balances reads t's main balances (in currency only, unless empty), through
// db, with
// their slots in one statement, so in one snapshot: read apart, a
// rebalance committed between the two reads would count the money it
// moved twice, or not at all.
func (s *Service) balances(ctx context.Context, db *ent.Client, t tenant.Tenant, only money.Currency) (map[money.Currency]Balance, error) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		if s.db.IsPostgres() {
			return "$" + strconv.Itoa(len(args))
		}
		return "?"
	}
	slots := func(expr string) string {
		return "(SELECT " + expr + " FROM " + balanceslot.Table + " AS s WHERE s." + balanceslot.FieldAccountID + " = a." + ledgeraccount.FieldID + ")"
	}
	q := "SELECT a." + ledgeraccount.FieldCurrency + ", a." + ledgeraccount.FieldAvailable + ", a." + ledgeraccount.FieldPending +
		", a." + ledgeraccount.FieldUpdatedAt +
		", CAST(COALESCE(" + slots("SUM(s."+balanceslot.FieldAvailable+")") + ", 0) AS BIGINT), " +
		slots("MAX(s."+balanceslot.FieldUpdatedAt+")") +
		" FROM " + ledgeraccount.Table + " AS a WHERE a." + ledgeraccount.FieldOwner + " = " + arg(t.MerchantID) +
		" AND a." + ledgeraccount.FieldMode + " = " + arg(t.Mode) + " AND a." + ledgeraccount.FieldKind + " = " + arg(string(Main))
	if only != "" {
		q += " AND a." + ledgeraccount.FieldCurrency + " = " + arg(string(only))
	}
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("ledger: balances: %w", err))
	}
	defer rows.Close()
	out := map[money.Currency]Balance{}
	for rows.Next() {
		var b Balance
		var cur string
		var updated time.Time
		var inSlots int64
		var slotUpdated stdsql.NullTime // SQLite holds no slots: NULL there
		if err := rows.Scan(&cur, &b.Available, &b.Pending, &updated, &inSlots, &slotUpdated); err != nil {
			return nil, store.Classify(fmt.Errorf("ledger: balances: %w", err))
		}
		b.Currency, b.Available = money.Currency(cur), b.Available+inSlots
		if slotUpdated.Valid && slotUpdated.Time.After(updated) {
			updated = slotUpdated.Time
		}
		b.UpdatedAt = &updated
		out[b.Currency] = b
	}
	if err := rows.Err(); err != nil {
		return nil, store.Classify(fmt.Errorf("ledger: balances: %w", err))
	}
	return out, nil
}

// ValidateFund checks a sandbox funding request (a supported currency and an
// amount money.ValidateAmount accepts) and records every bad field in f; nil
// means absent (or already reported by a decoder).
func ValidateFund(currency *string, amount *decimal.Decimal, f *apperr.Fields) {
	var cur money.Currency
	known := false
	if currency == nil {
		f.Add("currency", "is required")
	} else if cur, known = money.Parse(*currency); !known {
		f.Add("currency", "must be one of %s", currencyList())
	}
	switch {
	case amount == nil:
		f.Add("amount", "is required")
	case known:
		if msg := money.ValidateAmount(*amount, cur); msg != "" {
			f.Add("amount", "%s", msg)
		}
	case amount.Sign() <= 0:
		f.Add("amount", "must be greater than 0")
	case amount.GreaterThan(decimal.New(money.MaxUnits, 0)):
		f.Add("amount", "must be at most %d", money.MaxUnits)
	}
}

func currencyList() string {
	var b strings.Builder
	for i, c := range money.All() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(c))
	}
	return b.String()
}

// Fund credits the ctx tenant's available balance with amount of currency
// from the sandbox funding account, and returns the new balance, in tx, the
// request's transaction handed to it (with tx nil, in one of its own). It
// is the sandbox's top-up: NOT_FOUND, as an unknown route, in a mode where
// the simulations are not offered.
func (s *Service) Fund(ctx context.Context, tx *ent.Tx, currency string, amount decimal.Decimal) (Balance, error) {
	if err := s.simulations.CheckTenant(ctx); err != nil {
		return Balance{}, err
	}
	var f apperr.Fields
	ValidateFund(&currency, &amount, &f)
	if err := f.Err(); err != nil {
		return Balance{}, err
	}
	t, err := tenantOf(ctx)
	if err != nil {
		return Balance{}, err
	}
	cur := money.Currency(currency)
	minor, err := money.ToMinor(amount, cur)
	if err != nil {
		return Balance{}, err
	}
	var out Balance
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		// A balance is an int64 of minor units: ten fundings of the
		// largest amount in BTC (8 decimals) would overflow it, which the
		// credit refuses (balanceLimit).
		if _, err := s.Credit(ctx, tx, Posting{Memo: "sandbox funding"}, t, SandboxFunding, cur, minor); err != nil {
			return err
		}
		out, err = s.balance(ctx, tx.Client(), cur)
		return err
	})
	return out, err
}
