package merchants

import (
	"context"

	entsql "entgo.io/ent/dialect/sql"

	"merchantpay/ent/apikey"
	"merchantpay/internal/store"
)

// This file holds Lookup: a request's key authenticated and one row of its
// tenant's table read in a single statement.

// A Lookup reads one row of a tenant's table in the statement that
// authenticates the request's key: one round trip where Authenticate and
// then the look-up would take two. Build it once (NewLookup) and run it with
// AuthenticateLookup.
type Lookup struct{ query string }

// NewLookup builds a Lookup of columns of the row of table whose column by
// equals the looked-up value and whose merchant_id and mode are the key's.
// Its arguments are the key's hash, the time now and the value. The merchant's row is not
// read (one join fewer): the Principal it gives has no
// MerchantName or Email, which a read needs neither for its checks (key
// kind, rate limit) nor for its answer.
func NewLookup(dialect, table string, columns []string, by string) Lookup {
	k, t := entsql.Table(apikey.Table).As("k"), entsql.Table(table).As("t")
	cols := []string{k.C(apikey.FieldMerchantID), k.C(apikey.FieldMode), k.C(apikey.FieldKind), k.C(apikey.FieldPrefix)}
	for _, c := range columns {
		cols = append(cols, t.C(c))
	}
	query, _ := entsql.Dialect(dialect).Select(cols...).
		From(k).
		// The tenant columns have the same names in every table (ent's
		// TenantMixin), the key's own included.
		Join(t).OnP(entsql.And(
		entsql.ColumnsEQ(t.C(apikey.FieldMerchantID), k.C(apikey.FieldMerchantID)),
		entsql.ColumnsEQ(t.C(apikey.FieldMode), k.C(apikey.FieldMode)),
	)).
		Where(entsql.And(entsql.EQ(k.C(apikey.FieldHash), ""), liveKey(k),
			entsql.EQ(t.C(by), ""))).
		Limit(1).Query()
	return Lookup{query: query}
}

// AuthenticateLookup authenticates key and reads l's row for value in one
// statement; scan reads the row's columns. found is false, and nothing is
// scanned, when the key is not a live one or its tenant has no such row:
// the caller then takes the usual way (Authenticate, then its own look-up),
// which tells the two apart and gives each its own answer.
func (s *Service) AuthenticateLookup(ctx context.Context, key string, l Lookup, value any, scan func(Scanner) error) (p Principal, found bool, err error) {
	if !plausibleKey(key) {
		return Principal{}, false, nil
	}
	hash, now := Hash(key), s.clock.Now()
	rows, err := s.db.Reader().QueryContext(ctx, l.query, hash, now, value)
	if err != nil {
		return Principal{}, false, store.Classify(err)
	}
	defer rows.Close()
	if !rows.Next() {
		return Principal{}, false, store.Classify(rows.Err())
	}
	if err := scan(afterPrincipal{rows, &p}); err != nil {
		return Principal{}, false, store.Classify(err)
	}
	s.usage.touch(hash, now)
	return p, true, nil
}

// Scanner is one row of a query.
type Scanner interface{ Scan(dest ...any) error }

// afterPrincipal scans a Lookup's row: the principal's columns into p, the
// rest into the caller's destinations.
type afterPrincipal struct {
	row Scanner
	p   *Principal
}

func (a afterPrincipal) Scan(dest ...any) error {
	return a.row.Scan(append([]any{&a.p.MerchantID, &a.p.Mode, &a.p.Kind, &a.p.KeyPrefix}, dest...)...)
}
