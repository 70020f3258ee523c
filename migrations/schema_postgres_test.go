package migrations_test

import (
	"database/sql"
	"fmt"
	"strings"
)

// inspectPostgres reads the current schema from pg_catalog: each table's
// columns with their types, nullability, defaults, identity and collation;
// every relation's kind, persistence and storage parameters (reloptions);
// sequences; indexes, constraints and triggers by their definitions;
// functions by theirs; and enum and domain types.
func inspectPostgres(db *sql.DB, s *schemaState) error {
	const ns = `current_schema()::regnamespace`
	ours := func(name string) bool { return !strings.HasPrefix(name, versionTable) }
	err := queryStrings(db, `SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull::text,
			coalesce(pg_get_expr(d.adbin, d.adrelid), ''), a.attidentity::text, a.attgenerated::text,
			coalesce(co.collname, '')
		FROM pg_attribute a
		JOIN pg_class c ON c.oid = a.attrelid
		LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
		LEFT JOIN pg_collation co ON co.oid = a.attcollation
		WHERE c.relnamespace = `+ns+` AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
		ORDER BY c.relname, a.attnum`, 8, func(r []string) {
		if !ours(r[0]) {
			return
		}
		s.tables[r[0]] = append(s.tables[r[0]], column{name: r[1], typ: r[2], identity: r[5], generated: r[6] != ""})
		s.objects = append(s.objects, fmt.Sprintf("column %s.%s: type %s, not null %s, default %q, identity %q, generated %q, collation %q",
			r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]))
	})
	if err != nil {
		return err
	}
	for table, cols := range s.tables {
		s.objects = append(s.objects, fmt.Sprintf("columns of %s: %s", table, names(cols)))
	}
	queries := []struct {
		q    string
		n    int
		line func(r []string) string
	}{
		{`SELECT relname, relkind::text, relpersistence::text, coalesce(array_to_string(reloptions, ', '), '')
			FROM pg_class WHERE relnamespace = ` + ns, 4, func(r []string) string {
			return fmt.Sprintf("relation %s: kind %s, persistence %s, options (%s)", r[0], r[1], r[2], r[3])
		}},
		{`SELECT c.relname, format_type(s.seqtypid, NULL), s.seqstart::text, s.seqincrement::text, s.seqmin::text,
				s.seqmax::text, s.seqcache::text, s.seqcycle::text
			FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = ` + ns, 8, func(r []string) string {
			return fmt.Sprintf("sequence %s: %s", r[0], strings.Join(r[1:], " "))
		}},
		{`SELECT indexname, tablename, indexdef FROM pg_indexes WHERE schemaname = current_schema()`, 3, func(r []string) string {
			return fmt.Sprintf("index %s on %s: %s", r[0], r[1], r[2])
		}},
		{`SELECT con.conname, coalesce(c.relname, ''), con.contype::text, pg_get_constraintdef(con.oid)
			FROM pg_constraint con LEFT JOIN pg_class c ON c.oid = con.conrelid
			WHERE con.connamespace = ` + ns, 4, func(r []string) string {
			return fmt.Sprintf("constraint %s on %s: type %s, %s", r[0], r[1], r[2], r[3])
		}},
		{`SELECT t.tgname, c.relname, pg_get_triggerdef(t.oid), t.tgenabled::text
			FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
			WHERE NOT t.tgisinternal AND c.relnamespace = ` + ns, 4, func(r []string) string {
			return fmt.Sprintf("trigger %s on %s: %s, enabled %s", r[0], r[1], r[2], r[3])
		}},
		{`SELECT p.proname, p.prokind::text, pg_get_function_identity_arguments(p.oid),
				CASE WHEN p.prokind IN ('f', 'p') THEN pg_get_functiondef(p.oid) ELSE '' END
			FROM pg_proc p WHERE p.pronamespace = ` + ns, 4, func(r []string) string {
			return fmt.Sprintf("function %s(%s): kind %s, %s", r[0], r[2], r[1], r[3])
		}},
		{`SELECT t.typname, t.typtype::text, coalesce(format_type(t.typbasetype, t.typtypmod), ''),
				coalesce((SELECT string_agg(e.enumlabel, ', ' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid), '')
			FROM pg_type t WHERE t.typnamespace = ` + ns + ` AND t.typtype IN ('e', 'd', 'r', 'm')`, 4, func(r []string) string {
			return fmt.Sprintf("type %s: kind %s, base %s, labels (%s)", r[0], r[1], r[2], r[3])
		}},
	}
	for _, q := range queries {
		err := queryStrings(db, q.q, q.n, func(r []string) {
			if ours(r[0]) && (len(r) < 2 || ours(r[1])) {
				s.objects = append(s.objects, q.line(r))
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}
