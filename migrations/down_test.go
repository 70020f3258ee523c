package migrations_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
	"merchantpay/migrations"
)

// versionTable is goose's record of the applied migrations, as
// internal/store names it: a database rolled back by hand with the goose
// CLI (docs/OPERATIONS.md) uses the same table.
const versionTable = "goose_db_version"

// Operators roll a release back by running its migrations' down parts
// (docs/OPERATIONS.md), so each down part must take the database back to
// exactly the schema before its up part, keep the rows of the tables that
// stay, and leave a database that the up part applies to again. For each
// migration, on a fresh database migrated to the one before it: a row goes
// into every table, the migration is applied, a second row goes into every
// table that was there before, and the down part must restore the schema
// and keep both rows as they were; then the up part must apply again and
// give the schema it gave the first time. A down part's deliberate change
// to kept rows is not exercised: the one there is (event_fanouts marks the
// events still queued as not fanned out) finds its rows not queued or
// already marked.
func TestEveryDownUndoesItsUp(t *testing.T) {
	for _, kind := range []string{testdb.SQLite, testdb.Postgres} {
		t.Run(kind, func(t *testing.T) {
			fresh := testdb.SQLiteURL
			if kind == testdb.Postgres {
				fresh = testdb.PostgresURL
			}
			fsys, err := migrations.For(kind)
			if err != nil {
				t.Fatal(err)
			}
			ms := migrationsIn(t, fsys)
			for i, m := range ms {
				var prev int64
				if i > 0 {
					prev = ms[i-1].version
				}
				t.Run(m.name, func(t *testing.T) {
					downUndoesUp(t, fresh(t), prev, m.version)
				})
			}
		})
	}
}

// downUndoesUp checks migration version on a fresh database at dbURL,
// first migrated up to prev (0: nothing).
func downUndoesUp(t *testing.T, dbURL string, prev, version int64) {
	ctx := context.Background()
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := provider(t, db)
	if prev > 0 {
		if _, err := p.UpTo(ctx, prev); err != nil {
			t.Fatalf("up to %d: %v", prev, err)
		}
	}
	before := inspect(t, db)
	insertRows(t, db, before, 1)
	if _, err := p.ApplyVersion(ctx, version, true); err != nil {
		t.Fatalf("up: %v", err)
	}
	up := inspect(t, db)
	insertRows(t, db, up.only(before), 2)
	kept := dumpRows(t, db, before)

	if _, err := p.ApplyVersion(ctx, version, false); err != nil {
		t.Fatalf("down: %v", err)
	}
	if d := diff(before.objects, inspect(t, db).objects); d != "" {
		t.Errorf("the schema after down is not the schema before up (- before up, + after down):\n%s", d)
	}
	if d := diff(kept, dumpRows(t, db, before)); d != "" {
		t.Errorf("down changed the rows of the tables it keeps (- before down, + after):\n%s", d)
	}

	if _, err := p.ApplyVersion(ctx, version, true); err != nil {
		t.Fatalf("up again after down: %v", err)
	}
	if d := diff(up.objects, inspect(t, db).objects); d != "" {
		t.Errorf("up after down gives another schema than the first up (- first, + again):\n%s", d)
	}
}

// provider is goose's provider over db as internal/store makes it: the
// dialect's directory, goose's version table name, no global registry.
func provider(t *testing.T, db *store.DB) *goose.Provider {
	t.Helper()
	dir, d := testdb.SQLite, goose.DialectSQLite3
	if db.IsPostgres() {
		dir, d = testdb.Postgres, goose.DialectPostgres
	}
	fsys, err := migrations.For(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(d, db.SQL(), fsys,
		goose.WithTableName(versionTable),
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// migration is one file of a migrations directory.
type migration struct {
	name    string
	version int64
}

// migrationsIn lists the migrations in fsys, oldest first.
func migrationsIn(t *testing.T, fsys fs.FS) []migration {
	t.Helper()
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	var out []migration
	for _, n := range names { // fs.Glob sorts: by version, as the names start with it
		v, err := goose.NumericComponent(n)
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out = append(out, migration{n, v})
	}
	return out
}

// diff lists the lines only in want (-) and only in got (+); empty when the
// two sorted lists are equal.
func diff(want, got []string) string {
	seen := map[string]int{}
	for _, l := range got {
		seen[l]++
	}
	var out []string
	for _, l := range want {
		if seen[l] > 0 {
			seen[l]--
			continue
		}
		out = append(out, "- "+l)
	}
	for _, l := range got {
		if n := seen[l]; n > 0 {
			seen[l]--
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
