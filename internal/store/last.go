package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"merchantpay/ent"
)

// Statements put off to the end of a transaction. The conditional debit of
// a merchant's balance locks that row until the commit; every statement
// run after it, and its round trip, lengthens the time other requests of
// the same balance wait. A caller that writes more before committing (the
// idempotency record of a keyed request) marks its transaction with
// WithLast, and runs what Last put off with RunLast right before COMMIT.

type lastKey struct{}

type lastList struct {
	tx       *ent.Tx
	fns      []func(run context.Context) error
	preludes []Stmt
}

// WithLast returns ctx, which carries a transaction, such that Last puts
// statements of that transaction off to RunLast.
func WithLast(ctx context.Context) context.Context {
	return context.WithValue(ctx, lastKey{}, &lastList{tx: ent.TxFromContext(ctx)})
}

// Last runs fn in ctx now, or, when ctx's transaction was marked by
// WithLast, puts it off until its owner calls RunLast, just before the
// commit; its error then fails the transaction there. fn must be the last
// thing its caller does in the transaction, and nothing may depend on its
// effect before the commit: Withdraw's debit is.
func Last(ctx context.Context, fn func(ctx context.Context) error) error {
	if l, ok := ctx.Value(lastKey{}).(*lastList); ok && l.tx != nil && l.tx == ent.TxFromContext(ctx) {
		l.fns = append(l.fns, func(run context.Context) error { return fn(valuesOf{Context: run, values: ctx}) })
		return nil
	}
	return fn(ctx)
}

// valuesOf is the context a put-off statement runs in: the values (tenant,
// transaction, logger) of the context it was put off in, and the deadline
// and cancellation of the one RunLast is called with. The caller that put
// it off has returned by then, and may have ended its own context (a
// GraphQL operation's time budget does): the statement belongs to the
// commit, which the transaction's owner bounds.
type valuesOf struct {
	context.Context
	values context.Context
}

func (v valuesOf) Value(key any) any { return v.values.Value(key) }

// RunLast runs, in order, what Last put off in ctx's transaction (marked
// by WithLast), then the preludes none of it carried, stopping at the
// first error.
func RunLast(ctx context.Context) error {
	l, ok := ctx.Value(lastKey{}).(*lastList)
	if !ok {
		return nil
	}
	fns := l.fns
	l.fns = nil
	for _, fn := range fns {
		if err := fn(ctx); err != nil {
			return err
		}
	}
	for _, p := range TakePreludes(ctx) {
		if err := execPrelude(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

type rerunKey struct{}

// WithRerun marks ctx as carrying the second run of a request whose
// put-off statements were refused (see idem): the ledger then spreads a
// payout's balance over its slots instead of trying one slot again.
func WithRerun(ctx context.Context) context.Context { return context.WithValue(ctx, rerunKey{}, true) }

// Rerun reports whether ctx was marked by WithRerun.
func Rerun(ctx context.Context) bool { v, _ := ctx.Value(rerunKey{}).(bool); return v }

// Stmt is one statement and its arguments, numbered from $1.
type Stmt struct {
	SQL  string
	Args []any
}

// Prelude puts st off to the end of ctx's transaction (marked by
// WithLast), like Last, for a statement that writes exactly one row and
// whose effect nothing in the transaction reads: an event, the stored
// answer of a keyed request. A put-off statement that can carries the
// preludes in its own round trip (TakePreludes: the ledger's conditional
// debit on PostgreSQL); RunLast runs the others one by one after what Last
// put off. Unmarked, st runs now. Either way a statement that writes no
// row fails the transaction.
func Prelude(ctx context.Context, st Stmt) error {
	if l, ok := ctx.Value(lastKey{}).(*lastList); ok && l.tx != nil && l.tx == ent.TxFromContext(ctx) {
		l.preludes = append(l.preludes, st)
		return nil
	}
	return execPrelude(ctx, st)
}

// HasPreludes reports whether ctx's transaction has preludes put off (and
// not yet taken).
func HasPreludes(ctx context.Context) bool {
	l, ok := ctx.Value(lastKey{}).(*lastList)
	return ok && len(l.preludes) > 0
}

// TakePreludes hands the preludes of ctx's transaction to a statement that
// will carry them (see WithPreludes); RunLast then leaves them alone.
func TakePreludes(ctx context.Context) []Stmt {
	l, ok := ctx.Value(lastKey{}).(*lastList)
	if !ok {
		return nil
	}
	ps := l.preludes
	l.preludes = nil
	return ps
}

// WithPreludes renders ps as the CTEs of a PostgreSQL statement, "p1 AS
// (... RETURNING 1), p2 AS (...)", with their arguments renumbered in
// order from $1, and the condition "(SELECT count(*) FROM p1) = 1 AND ..."
// that the statement must put where its own effect depends on it, so that
// every prelude runs before it and its effect needs all of theirs. The
// carrier's own arguments follow args.
func WithPreludes(ps []Stmt) (ctes, cond string, args []any) {
	var c, w strings.Builder
	for i, p := range ps {
		name := "p" + strconv.Itoa(i+1)
		if i > 0 {
			c.WriteString(", ")
			w.WriteString(" AND ")
		}
		c.WriteString(name + " AS (" + renumber(p.SQL, len(args)) + " RETURNING 1)")
		w.WriteString("(SELECT count(*) FROM " + name + ") = 1")
		args = append(args, p.Args...)
	}
	return c.String(), w.String(), args
}

// renumber adds by to each placeholder $n of query (built by this service:
// no dollar sign appears anywhere else in it).
func renumber(query string, by int) string {
	if by == 0 {
		return query
	}
	var b strings.Builder
	for i := 0; i < len(query); i++ {
		b.WriteByte(query[i])
		if query[i] != '$' {
			continue
		}
		j := i + 1
		for j < len(query) && query[j] >= '0' && query[j] <= '9' {
			j++
		}
		if n, err := strconv.Atoi(query[i+1 : j]); err == nil {
			b.WriteString(strconv.Itoa(n + by))
			i = j - 1
		}
	}
	return b.String()
}

func execPrelude(ctx context.Context, st Stmt) error {
	tx := ent.TxFromContext(ctx)
	if tx == nil {
		return fmt.Errorf("store: a prelude outside a transaction")
	}
	res, err := tx.ExecContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return ErrPreludeWroteNothing
	}
	return nil
}

// ErrPreludeWroteNothing: a prelude's row was not written (the stored
// answer of a keyed request another instance stored first).
var ErrPreludeWroteNothing = errors.New("store: a prelude wrote no row")
