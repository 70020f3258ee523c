package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"merchantpay/ent"
)

// Stmt is one statement and its arguments, numbered from $1. An operation
// that writes several rows in one round trip builds the INSERTs of the
// rows as Stmts and hands them to the statement that carries them (a
// withdrawal's row and event go with its debit: ledger.Service.Payout).
type Stmt struct {
	SQL  string
	Args []any
	// Rows is how many rows it writes; 0 means one.
	Rows int
	// Then, when not nil, writes the rows that follow from SQL's (an
	// event's fan-out queue row). As a WITH clause (CTEs) it is a clause of
	// the same statement whose text reads SQL's rows as the relation
	// Written, holding the columns SQL returns (Returning); ExecRows runs it
	// after SQL, and then its text must find them by itself.
	Then *Stmt
	// Returning is what SQL returns as a WITH clause, for Then; 1 when
	// empty.
	Returning string
}

// Written is how a Stmt's Then names, as a WITH clause, the rows of the
// statement it follows.
const Written = "{written}"

func (st Stmt) rows() int {
	if st.Rows == 0 {
		return 1
	}
	return st.Rows
}

// CTEs renders rows, statements that each write exactly Stmt.Rows rows, as the
// WITH clauses of one PostgreSQL statement: "w1 AS (... RETURNING 1), w2
// AS (...)", with their arguments renumbered in order from $1. cond is
// "(SELECT count(*) FROM w1) = n1 AND ...": the carrying statement puts it
// where its own effect depends on it, so that every row is written before
// that effect and the effect needs all of them. A statement's Then is the
// clause after it, "wNt", counted in cond as well. The carrier's own
// arguments follow args.
func CTEs(rows []Stmt) (ctes, cond string, args []any) {
	var c, w strings.Builder
	for i, p := range rows {
		name := "w" + strconv.Itoa(i+1)
		if i > 0 {
			c.WriteString(", ")
			w.WriteString(" AND ")
		}
		returning := p.Returning
		if returning == "" {
			returning = "1"
		}
		c.WriteString(name + " AS (" + renumber(p.SQL, len(args)) + " RETURNING " + returning + ")")
		w.WriteString("(SELECT count(*) FROM " + name + ") = " + strconv.Itoa(p.rows()))
		args = append(args, p.Args...)
		if t := p.Then; t != nil {
			then := name + "t"
			c.WriteString(", " + then + " AS (" + strings.ReplaceAll(renumber(t.SQL, len(args)), Written, name) + " RETURNING 1)")
			w.WriteString(" AND (SELECT count(*) FROM " + then + ") = " + strconv.Itoa(t.rows()))
			args = append(args, t.Args...)
		}
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

// ExecRows runs st, which must write exactly st.Rows rows, in tx, then its
// Then: ErrWroteNothing when one wrote fewer. Its database error is returned as
// it is (a unique index's refusal stays recognisable).
func ExecRows(ctx context.Context, tx *ent.Tx, st Stmt) error {
	if tx == nil {
		return fmt.Errorf("store: a row's statement outside a transaction")
	}
	res, err := tx.ExecContext(ctx, st.SQL, st.Args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != int64(st.rows()) {
		return ErrWroteNothing
	}
	if st.Then != nil {
		return ExecRows(ctx, tx, *st.Then)
	}
	return nil
}

// ErrWroteNothing: a statement wrote fewer rows than it should have.
var ErrWroteNothing = errors.New("store: a statement wrote no row")
