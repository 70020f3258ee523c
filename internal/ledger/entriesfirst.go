package ledger

import (
	"strconv"
	"strings"
	"time"

	"merchantpay/internal/store"
)

// entriesFirst builds a PostgreSQL statement that inserts rows (INSERTs a
// caller built: store.CTEs) and postings' entries (the clause e) in its
// WITH clauses, before the balance change the caller appends to it, whose
// condition must hold guard's. It reads every inserted row: PostgreSQL
// runs a WITH clause nobody reads after the main statement, which would
// insert the rows while holding the balance row's lock; and a row that
// wrote nothing then leaves the balance alone.
type entriesFirst struct {
	sql  strings.Builder
	args []any
	// entries is how many entries the clause e inserts.
	entries int
	// wrote is rows' condition (store.CTEs): "" when there are none.
	wrote string
}

// newEntriesFirst starts the statement that writes rows and postings'
// entries, made at now.
func newEntriesFirst(rows []store.Stmt, postings []Posting, now time.Time) *entriesFirst {
	ctes, wrote, args := store.CTEs(rows)
	w := &entriesFirst{args: args, entries: entryCount(postings), wrote: wrote}
	w.sql.WriteString("WITH ")
	if ctes != "" {
		w.sql.WriteString(ctes + ", ")
	}
	w.sql.WriteString("e AS (" + entriesInsert(postings, now, w.arg) + " RETURNING 1)")
	return w
}

// guard is the condition of the balance change, its argument added: every
// entry and every one of rows written.
func (w *entriesFirst) guard() string {
	g := "(SELECT count(*) FROM e) = " + w.arg(w.entries)
	if w.wrote != "" {
		g += " AND " + w.wrote
	}
	return g
}

// arg adds v to the statement's arguments and returns its placeholder.
func (w *entriesFirst) arg(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

// rowsWritten is true when every one of rows wrote its rows, as a column
// of the statement's answer.
func (w *entriesFirst) rowsWritten() string {
	if w.wrote == "" {
		return "true"
	}
	return w.wrote
}

// entryCount is how many entries postings hold.
func entryCount(postings []Posting) int {
	n := 0
	for _, p := range postings {
		n += len(p.Entries)
	}
	return n
}
