package migrations_test

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"testing"

	"merchantpay/internal/store"
)

// schemaState is what a database's schema is, for comparing two moments of
// one database. goose's version table is left out: it records the
// migrations rather than being made by them.
type schemaState struct {
	// tables holds each table's columns, in the table's order.
	tables map[string][]column
	// objects describes every table, column, index, constraint, trigger,
	// function, sequence and storage parameter, one line each, sorted.
	objects []string
}

type column struct {
	name, typ string
	// identity is PostgreSQL's attidentity: "a" (always), "d" (by
	// default) or "".
	identity string
	// generated columns take no value on insert.
	generated bool
}

// only is s with just the tables that other has too.
func (s schemaState) only(other schemaState) schemaState {
	out := schemaState{tables: map[string][]column{}}
	for name, cols := range s.tables {
		if _, ok := other.tables[name]; ok {
			out.tables[name] = cols
		}
	}
	return out
}

func (s schemaState) tableNames() []string {
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func inspect(t *testing.T, db *store.DB) schemaState {
	t.Helper()
	s := schemaState{tables: map[string][]column{}}
	var err error
	if db.IsPostgres() {
		err = inspectPostgres(db.SQL(), &s)
	} else {
		err = inspectSQLite(db.SQL(), &s)
	}
	if err != nil {
		t.Fatalf("inspect the schema: %v", err)
	}
	sort.Strings(s.objects)
	return s
}

// queryStrings runs q and calls fn with each row's columns as text.
func queryStrings(db *sql.DB, q string, n int, fn func(r []string), args ...any) error {
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		r := make([]string, n)
		ptrs := make([]any, n)
		for i := range r {
			ptrs[i] = &r[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		fn(r)
	}
	return rows.Err()
}

// inspectSQLite reads sqlite_master, with the SQL of each object
// normalised (see normaliseSQL and normaliseTable), and the columns and
// indexes SQLite reports for each table.
func inspectSQLite(db *sql.DB, s *schemaState) error {
	type object struct{ typ, name, table, sql string }
	var objs []object
	err := queryStrings(db, `SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master
		WHERE name <> 'sqlite_sequence' AND tbl_name <> ?`, 4, func(r []string) {
		objs = append(objs, object{r[0], r[1], r[2], r[3]})
	}, versionTable)
	if err != nil {
		return err
	}
	for _, o := range objs {
		def := normaliseSQL(o.sql)
		if o.typ == "table" {
			def = normaliseTable(o.sql)
		}
		s.objects = append(s.objects, fmt.Sprintf("%s %s on %s: %s", o.typ, o.name, o.table, def))
		if o.typ != "table" {
			continue
		}
		var cols []column
		err := queryStrings(db, `SELECT name, type, "notnull", coalesce(dflt_value, 'NULL'), pk, hidden
			FROM pragma_table_xinfo(?) ORDER BY cid`, 6, func(r []string) {
			cols = append(cols, column{name: r[0], typ: r[1], generated: r[5] == "2" || r[5] == "3"})
			s.objects = append(s.objects, fmt.Sprintf("column %s.%s: type %s, not null %s, default %s, pk %s, hidden %s",
				o.name, r[0], r[1], r[2], r[3], r[4], r[5]))
		}, o.name)
		if err != nil {
			return err
		}
		s.tables[o.name] = cols
		s.objects = append(s.objects, fmt.Sprintf("columns of %s: %s", o.name, names(cols)))
		err = queryStrings(db, `SELECT il.name, il."unique", il.origin, il.partial,
			coalesce((SELECT group_concat(coalesce(ii.name, ii.cid), ', ') FROM (SELECT * FROM pragma_index_info(il.name) ORDER BY seqno) ii), '')
			FROM pragma_index_list(?) il`, 5, func(r []string) {
			s.objects = append(s.objects, fmt.Sprintf("index %s on %s (%s): unique %s, origin %s, partial %s",
				r[0], o.name, r[4], r[1], r[2], r[3]))
		}, o.name)
		if err != nil {
			return err
		}
	}
	return nil
}

func names(cols []column) string {
	var n []string
	for _, c := range cols {
		n = append(n, c.name)
	}
	return strings.Join(n, ", ")
}

// normaliseSQL drops the quoting of identifiers (backquotes and double
// quotes: SQLite writes a renamed table's name in double quotes) and
// collapses white space, leaving string literals as they are.
func normaliseSQL(q string) string {
	var b strings.Builder
	inLiteral, space := false, false
	for _, r := range q {
		switch {
		case r == '\'':
			inLiteral = !inLiteral
		case inLiteral:
		case r == '`' || r == '"':
			continue
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// normaliseTable describes a CREATE TABLE statement by its column
// definitions, in order, and its table constraints, as a set: a column
// that ALTER TABLE ADD COLUMN appended comes after the constraints in the
// stored statement, where a table created with it lists it before them,
// and the two tables are the same.
func normaliseTable(q string) string {
	q = normaliseSQL(q)
	open, end := strings.IndexByte(q, '('), strings.LastIndexByte(q, ')')
	if open < 0 || end < open {
		return q
	}
	var cols, constraints []string
	for _, part := range splitTopLevel(q[open+1 : end]) {
		part = strings.TrimSpace(part)
		upper := strings.ToUpper(part)
		isConstraint := false
		for _, kw := range []string{"PRIMARY KEY", "CONSTRAINT ", "CHECK", "UNIQUE", "FOREIGN KEY"} {
			isConstraint = isConstraint || strings.HasPrefix(upper, kw)
		}
		if isConstraint {
			constraints = append(constraints, part)
		} else {
			cols = append(cols, part)
		}
	}
	sort.Strings(constraints)
	return fmt.Sprintf("columns (%s), constraints (%s)%s",
		strings.Join(cols, ", "), strings.Join(constraints, ", "), q[end+1:])
}

// splitTopLevel splits s at the commas outside parentheses and string
// literals.
func splitTopLevel(s string) []string {
	var parts []string
	depth, inLiteral, start := 0, false, 0
	for i, r := range s {
		switch {
		case r == '\'':
			inLiteral = !inLiteral
		case inLiteral:
		case r == '(':
			depth++
		case r == ')':
			depth--
		case r == ',' && depth == 0:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}
