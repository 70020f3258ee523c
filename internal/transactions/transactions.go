// Package transactions reads transactions: by the service's reference or the
// merchant's (without regard to case), and as a filtered, paginated list.
package transactions

import (
	"context"
	"fmt"
	"strings"

	entsql "entgo.io/ent/dialect/sql"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/apperr"
	"merchantpay/internal/merchants"
	"merchantpay/internal/page"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/present/txview"
)

// Types and statuses a list may filter on.
var (
	Types    = []string{"DEPOSIT", "WITHDRAWAL", "SWAP"}
	Statuses = []string{"pending", "success", "failed", "refunded"}
)

// Service reads transactions.
type Service struct {
	db *store.DB
	// byReference and byMerchantReference select txview.Columns of one
	// transaction of a tenant; args: the reference, merchant id, mode.
	byReference, byMerchantReference string
	// withKey is byReference in the statement that authenticates the key;
	// on PostgreSQL it also reads the row's version (xmin), and
	// versionWithKey reads the version alone, to check an answer kept in
	// rendered (nil on SQLite, whose rows have no version).
	withKey, versionWithKey merchants.Lookup
	rendered                *renderedCache
}

// New returns the service.
func New(db *store.DB) *Service {
	s := &Service{db: db,
		byReference:         lookupQuery(db.Dialect, transaction.FieldReference),
		byMerchantReference: lookupQuery(db.Dialect, transaction.FieldMerchantReferenceKey),
		withKey:             merchants.NewLookup(db.Dialect, transaction.Table, txview.Columns(), transaction.FieldReference),
	}
	if db.IsPostgres() {
		s.withKey = merchants.NewLookup(db.Dialect, transaction.Table, append(txview.Columns(), rowVersion), transaction.FieldReference)
		s.versionWithKey = merchants.NewLookup(db.Dialect, transaction.Table, []string{rowVersion}, transaction.FieldReference)
		s.rendered = newRenderedCache(renderedGeneration)
	}
	return s
}

// rowVersion is PostgreSQL's system column naming the transaction that
// wrote a row's current version.
const rowVersion = "xmin"

// lookupQuery is written once rather than built by ent on every look-up
// (quoting 55 columns each time was a fifth of the service's CPU on GET
// /transactions/{ref}). Being raw SQL, it is scoped to the tenant here, not
// by ent's interceptor. Both look-ups are exact ones on a unique index:
// reference, and (merchant_id, mode, merchant_reference_key).
func lookupQuery(dialect, byColumn string) string {
	query, _ := entsql.Dialect(dialect).Select(txview.Columns()...).From(entsql.Table(transaction.Table)).
		Where(entsql.And(
			entsql.EQ(byColumn, ""),
			entsql.EQ(transaction.FieldMerchantID, ""),
			entsql.EQ(transaction.FieldMode, ""),
		)).Limit(1).Query()
	return query
}

// ReferenceKey is how merchant references are compared: without regard to case.
func ReferenceKey(ref string) string { return strings.ToLower(ref) }

// DuplicateReference is the error for a merchant reference that another
// transaction of the tenant holds.
func DuplicateReference(ref string) error {
	return &apperr.Error{Kind: apperr.DuplicateReference,
		Message: fmt.Sprintf("a transaction with reference %q already exists (references ignore case)", ref),
		Fields:  []apperr.FieldError{{Field: "reference", Message: "is already used by another transaction"}}}
}

// CheckReference answers DuplicateReference when a transaction of the ctx
// tenant (c: the caller's transaction's client) holds ref. Checking first
// keeps the common duplicate away from the unique index, whose violation
// would abort a PostgreSQL transaction; the index still settles a race.
func CheckReference(ctx context.Context, c *ent.Client, ref string) error {
	taken, err := c.Transaction.Query().Where(transaction.MerchantReferenceKey(ReferenceKey(ref))).Exist(ctx)
	if err != nil {
		return err
	}
	if taken {
		return DuplicateReference(ref)
	}
	return nil
}

// Get renders a transaction of the ctx tenant found by the service's
// reference or, failing that, by the merchant's reference, read in tx, the
// caller's transaction (it sees its uncommitted rows), or outside any when
// tx is nil.
func (s *Service) Get(ctx context.Context, tx *ent.Tx, ref string) (txview.Transaction, error) {
	return s.get(ctx, s.db.ClientOf(tx), ref, true)
}

// GetByMerchantReference is Get when GetWithKey, with the same tenant's
// key, has just found no transaction with the service's reference ref.
func (s *Service) GetByMerchantReference(ctx context.Context, tx *ent.Tx, ref string) (txview.Transaction, error) {
	return s.get(ctx, s.db.ClientOf(tx), ref, false)
}

// possibleRef reports whether ref could name a transaction at all.
func possibleRef(ref string) bool { return ref != "" && len(ref) <= 200 }

func (s *Service) get(ctx context.Context, c *ent.Client, ref string, byReference bool) (txview.Transaction, error) {
	if !possibleRef(ref) {
		return txview.Transaction{}, notFound(ref)
	}
	t, ok := tenant.From(ctx)
	if !ok {
		return txview.Transaction{}, tenant.ErrNoTenant
	}
	// Two exact look-ups, each on its unique index, rather than one OR: the
	// planner may answer the OR by walking the merchant's index, which
	// reads every transaction of the merchant.
	var v txview.Transaction
	var found bool
	var err error
	if byReference {
		// Service references are found in any case, as merchant ones are.
		canonical, _ := ServiceReference(ref)
		v, found, err = s.lookup(ctx, c, s.byReference, canonical, t)
	}
	if err == nil && !found {
		v, found, err = s.lookup(ctx, c, s.byMerchantReference, ReferenceKey(ref), t)
	}
	if err == nil && !found {
		return txview.Transaction{}, notFound(ref)
	}
	return v, err
}

// GetWithKey is Get for a request whose key is not yet checked: it
// authenticates key and finds the transaction by the service's reference
// in one round trip, and renders it. found is false when either is missing;
// the caller then authenticates and calls Get, which answers each case as
// before. On PostgreSQL a transaction rendered before is checked by its
// row's version alone and, unchanged, answered as rendered then (see
// renderedCache); changed, it is read again (a second round trip).
func (s *Service) GetWithKey(ctx context.Context, auth *merchants.Service, key, ref string) (p merchants.Principal, v Rendered, found bool, err error) {
	if !possibleRef(ref) {
		return p, nil, false, nil
	}
	ref, _ = ServiceReference(ref) // found in any case
	if s.rendered != nil {
		if e, ok := s.rendered.get(ref); ok {
			var version int64
			p, found, err = auth.AuthenticateLookup(ctx, key, s.versionWithKey, ref, func(row merchants.Scanner) error {
				return row.Scan(&version)
			})
			if err != nil || !found {
				return p, nil, found, err
			}
			if version == e.version {
				s.rendered.hits.Add(1)
				return p, e.json, true, nil
			}
		}
		s.rendered.misses.Add(1)
	}
	var t txview.Transaction
	var version int64
	p, found, err = auth.AuthenticateLookup(ctx, key, s.withKey, ref, func(row merchants.Scanner) (err error) {
		if s.rendered != nil {
			row = versioned{row, &version}
		}
		t, err = txview.Scan(row)
		return err
	})
	if err != nil || !found {
		return p, nil, found, err
	}
	v = t.AppendJSON(make([]byte, 0, 1024))
	if s.rendered != nil {
		s.rendered.put(ref, renderedEntry{version: version, json: v})
	}
	return p, v, true, nil
}

// versioned scans a row of txview.Columns followed by its version.
type versioned struct {
	row     merchants.Scanner
	version *int64
}

func (r versioned) Scan(dest ...any) error { return r.row.Scan(append(dest, r.version)...) }

// RenderedStats reports how many GetWithKey answers were rendered answers
// whose row had not changed (hits) and how many were read and rendered
// (misses), and how many are kept: for tests and diagnostics. All are zero
// on SQLite.
func (s *Service) RenderedStats() (hits, misses uint64, kept int) {
	if s.rendered == nil {
		return 0, 0, 0
	}
	return s.rendered.hits.Load(), s.rendered.misses.Load(), s.rendered.len()
}

func notFound(ref string) error {
	return apperr.New(apperr.NotFound, "no transaction with reference %q", ref)
}

// lookup runs one of the look-up queries for key within tenant t, through c.
func (s *Service) lookup(ctx context.Context, c *ent.Client, query, key string, t tenant.Tenant) (txview.Transaction, bool, error) {
	rows, err := c.QueryContext(ctx, query, key, t.MerchantID, t.Mode)
	if err != nil {
		return txview.Transaction{}, false, store.Classify(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return txview.Transaction{}, false, store.Classify(rows.Err())
	}
	v, err := txview.Scan(rows)
	if err != nil {
		return txview.Transaction{}, false, store.Classify(err)
	}
	return v, true, nil
}

// List returns a page of the tenant's transactions, newest first.
func (s *Service) List(ctx context.Context, f Filter, p page.Params) ([]*ent.Transaction, page.Info, error) {
	q := s.db.Reader().Transaction.Query().Where(f.predicates()...)
	if p.After != nil {
		q = q.Where(transaction.Or(
			transaction.CreatedAtLT(p.After.Time),
			transaction.And(transaction.CreatedAt(p.After.Time), transaction.IDLT(p.After.ID)),
		))
	}
	rows, err := q.Order(ent.Desc(transaction.FieldCreatedAt), ent.Desc(transaction.FieldID)).Limit(p.Limit + 1).All(ctx)
	if err != nil {
		return nil, page.Info{}, store.Classify(err)
	}
	rows, info := page.Cut(rows, p.Limit, Cursor)
	return rows, info, nil
}

// CursorID is the form of the ids in transactions' cursors.
var CursorID page.IDForm = page.UUID

// Cursor is a transaction's position in a list.
func Cursor(t *ent.Transaction) page.Cursor { return page.Cursor{Time: t.CreatedAt, ID: t.ID} }
