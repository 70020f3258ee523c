package migrations_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"merchantpay/internal/store"
)

// insertRows puts one row into each table of s, every column given a value
// of its type made from n (rows made with different n differ in every
// column, so they never collide on a unique index).
func insertRows(t *testing.T, db *store.DB, s schemaState, n int) {
	t.Helper()
	for _, table := range s.tableNames() {
		var cols, vals []string
		overriding := ""
		for _, c := range s.tables[table] {
			if c.generated {
				continue
			}
			v, err := sampleValue(db.IsPostgres(), c.typ, n)
			if err != nil {
				t.Fatalf("%s.%s: %v", table, c.name, err)
			}
			if c.identity == "a" {
				overriding = " OVERRIDING SYSTEM VALUE"
			}
			cols = append(cols, `"`+c.name+`"`)
			vals = append(vals, v)
		}
		q := fmt.Sprintf(`INSERT INTO "%s" (%s)%s VALUES (%s)`, table,
			strings.Join(cols, ", "), overriding, strings.Join(vals, ", "))
		if _, err := db.SQL().ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// sampleValue is a literal of a column's type made from n. A type not known
// here fails the test, to be added, rather than being given a guess.
func sampleValue(postgres bool, typ string, n int) (string, error) {
	typ = strings.ToLower(typ)
	if postgres {
		switch {
		case typ == "text" || strings.HasPrefix(typ, "character varying"):
			return fmt.Sprintf("'v%d'", n), nil
		case typ == "bigint" || typ == "integer" || typ == "smallint" || typ == "numeric":
			return fmt.Sprint(n), nil
		case typ == "boolean":
			return fmt.Sprint(n%2 == 1), nil
		case strings.HasPrefix(typ, "timestamp"):
			return fmt.Sprintf("'2026-01-%02d 10:00:00+00'", n), nil
		case typ == "jsonb" || typ == "json":
			return fmt.Sprintf(`'{"n": %d}'`, n), nil
		case typ == "bytea":
			return fmt.Sprintf(`'\x%02x'`, n), nil
		}
	} else {
		switch typ {
		case "text":
			return fmt.Sprintf("'v%d'", n), nil
		case "integer", "bigint", "int":
			return fmt.Sprint(n), nil
		case "bool", "boolean":
			return fmt.Sprint(n % 2), nil
		case "datetime":
			return fmt.Sprintf("'2026-01-%02d 10:00:00'", n), nil
		case "json":
			return fmt.Sprintf(`'{"n": %d}'`, n), nil
		case "blob":
			return fmt.Sprintf("X'%02x'", n), nil
		}
	}
	return "", fmt.Errorf("no sample value for type %q", typ)
}

// dumpRows is every row of the tables of s, the columns s gives them, as
// text: one sorted line per row.
func dumpRows(t *testing.T, db *store.DB, s schemaState) []string {
	t.Helper()
	var out []string
	for _, table := range s.tableNames() {
		var exprs []string
		for _, c := range s.tables[table] {
			if db.IsPostgres() {
				exprs = append(exprs, fmt.Sprintf(`quote_nullable("%s"::text)`, c.name))
			} else {
				exprs = append(exprs, fmt.Sprintf(`quote("%s")`, c.name))
			}
		}
		q := fmt.Sprintf(`SELECT %s FROM "%s"`, strings.Join(exprs, ", "), table)
		err := queryStrings(db.SQL(), q, len(exprs), func(r []string) {
			out = append(out, table+": "+strings.Join(r, ", "))
		})
		if err != nil {
			t.Fatalf("rows of %s: %v", table, err)
		}
	}
	sort.Strings(out)
	return out
}
