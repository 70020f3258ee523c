package store

import (
	"reflect"
	"testing"
)

func TestWithPreludes(t *testing.T) {
	ctes, cond, args := WithPreludes([]Stmt{
		{SQL: `INSERT INTO a (x, y) VALUES ($1, $2)`, Args: []any{"x", 2}},
		{SQL: `INSERT INTO b (z) VALUES ($1) ON CONFLICT (z) DO UPDATE SET z = $1 WHERE b.n <= $2`, Args: []any{3, 4}},
		{SQL: `INSERT INTO c (w) VALUES ($1)`, Args: []any{5}},
	})
	want := `p1 AS (INSERT INTO a (x, y) VALUES ($1, $2) RETURNING 1), ` +
		`p2 AS (INSERT INTO b (z) VALUES ($3) ON CONFLICT (z) DO UPDATE SET z = $3 WHERE b.n <= $4 RETURNING 1), ` +
		`p3 AS (INSERT INTO c (w) VALUES ($5) RETURNING 1)`
	if ctes != want {
		t.Errorf("ctes:\n%s\nwant\n%s", ctes, want)
	}
	if want := `(SELECT count(*) FROM p1) = 1 AND (SELECT count(*) FROM p2) = 1 AND (SELECT count(*) FROM p3) = 1`; cond != want {
		t.Errorf("cond: %s", cond)
	}
	if !reflect.DeepEqual(args, []any{"x", 2, 3, 4, 5}) {
		t.Errorf("args: %v", args)
	}
	if ctes, cond, args := WithPreludes(nil); ctes != "" || cond != "" || args != nil {
		t.Errorf("none: %q %q %v", ctes, cond, args)
	}
	if got := renumber(`$9 $10 $1,$2)`, 10); got != `$19 $20 $11,$12)` {
		t.Errorf("renumber: %s", got)
	}
}
