package store_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"entgo.io/ent/dialect/sql/schema"

	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
)

// schemaLeft is what ent's auto-migration would still change on db, with
// drops of indexes and columns included: empty when the database is exactly
// the ent schema.
func schemaLeft(t *testing.T, db *store.DB) string {
	t.Helper()
	var buf bytes.Buffer
	if err := db.Reader().Schema.WriteTo(context.Background(), &buf,
		schema.WithDropIndex(true), schema.WithDropColumn(true)); err != nil {
		t.Fatalf("schema diff: %v", err)
	}
	var stmts []string
	for _, l := range strings.Split(buf.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" && l != "BEGIN;" && l != "COMMIT;" {
			stmts = append(stmts, l)
		}
	}
	return strings.Join(stmts, "\n")
}

// The migrations build exactly the ent schema. When this fails, ent/schema
// changed without its migration: run `make migration NAME=what_changed`.
func TestMigrationsMatchEntSchema(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		db := testdb.Open(t, u)
		if left := schemaLeft(t, db); left != "" {
			t.Fatalf("after every migration, the ent schema still wants:\n%s\n"+
				"ent/schema changed without a migration: run `make migration NAME=what_changed` and commit the new files", left)
		}
		ms, err := db.Migrations(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			t.Fatal("no migrations embedded")
		}
		for _, m := range ms {
			if !m.Applied {
				t.Errorf("%s not applied", m.Name)
			}
		}
		if err := db.RequireMigrated(context.Background()); err != nil {
			t.Errorf("RequireMigrated after Migrate: %v", err)
		}
	})
}

// A fresh database has every migration pending, and RequireMigrated names
// them instead of letting a process run on it.
func TestRequireMigratedOnFreshDatabase(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		db, err := store.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.RequireMigrated(context.Background())
		if err == nil || !strings.Contains(err.Error(), "_baseline.sql") {
			t.Fatalf("RequireMigrated on a fresh database: %v, want the pending baseline named", err)
		}
	})
}

// Two processes migrating one fresh database at once both succeed, and
// each migration is applied and recorded once.
func TestConcurrentMigrate(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		var dbs [2]*store.DB
		for i := range dbs {
			db, err := store.Open(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dbs[i] = db
		}
		var wg sync.WaitGroup
		errs := make([]error, len(dbs))
		for i, db := range dbs {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = db.Migrate(ctx) }()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("instance %d: %v", i, err)
			}
		}
		rows, err := dbs[0].SQL().QueryContext(ctx, "SELECT version_id, count(*) FROM goose_db_version GROUP BY version_id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var v int64
			var c int
			if err := rows.Scan(&v, &c); err != nil {
				t.Fatal(err)
			}
			if c != 1 {
				t.Errorf("version %d recorded %d times", v, c)
			}
			n++
		}
		ms, _ := dbs[0].Migrations(ctx)
		if n != len(ms)+1 { // goose's version 0 and one row per migration
			t.Errorf("%d versions recorded for %d migrations", n, len(ms))
		}
	})
}

// A migration that fails leaves the database as it was before it, and the
// error names its file and carries the database's message.
func TestFailedMigrationRollsBack(t *testing.T) {
	good := &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE first_table (id integer PRIMARY KEY);\n")}
	bad := &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE second_table (id integer PRIMARY KEY);\n" +
		"INSERT INTO first_table (id) VALUES (1);\nINSERT INTO no_such_table (id) VALUES (1);\n")}
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		db, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.MigrateFS(ctx, fstest.MapFS{"00001_first.sql": good}); err != nil {
			t.Fatal(err)
		}
		err = db.MigrateFS(ctx, fstest.MapFS{"00001_first.sql": good, "00002_broken.sql": bad})
		if err == nil {
			t.Fatal("a broken migration applied")
		}
		if !strings.Contains(err.Error(), "00002_broken.sql") || !strings.Contains(err.Error(), "no_such_table") {
			t.Errorf("error %q does not name the file and the database's complaint", err)
		}
		var n int
		if err := db.SQL().QueryRowContext(ctx, "SELECT count(*) FROM first_table").Scan(&n); err != nil || n != 0 {
			t.Errorf("first_table after the failure: %d rows, %v; want it empty, as it was", n, err)
		}
		if _, err := db.SQL().ExecContext(ctx, "SELECT * FROM second_table"); err == nil {
			t.Error("second_table exists after its migration failed")
		}
		if err := db.SQL().QueryRowContext(ctx, "SELECT count(*) FROM goose_db_version WHERE version_id = 2").Scan(&n); err != nil || n != 0 {
			t.Errorf("the failed migration is recorded: %d, %v", n, err)
		}
	})
}

// Instances that find the same migrations pending on a database already
// under migration take turns: each pending migration runs once, and every
// instance succeeds.
func TestConcurrentMigrateOfPendingMigrations(t *testing.T) {
	first := &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE first_table (id integer PRIMARY KEY);\n")}
	// Long enough (a counting query) for the others to find it pending.
	slow := &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE second_table (id integer PRIMARY KEY);\n" +
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000) SELECT count(*) FROM c;\n" +
		"INSERT INTO first_table (id) VALUES (1);\n")}
	third := &fstest.MapFile{Data: []byte("-- +goose Up\nINSERT INTO first_table (id) VALUES (2);\n")}
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		var dbs [4]*store.DB
		for i := range dbs {
			db, err := store.Open(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dbs[i] = db
		}
		if err := dbs[0].MigrateFS(ctx, fstest.MapFS{"00001_first.sql": first}); err != nil {
			t.Fatal(err)
		}
		all := fstest.MapFS{"00001_first.sql": first, "00002_slow.sql": slow, "00003_third.sql": third}
		var wg sync.WaitGroup
		errs := make([]error, len(dbs))
		for i, db := range dbs {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = db.MigrateFS(ctx, all) }()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("instance %d: %v", i, err)
			}
		}
		var n int
		if err := dbs[0].SQL().QueryRowContext(ctx, "SELECT count(*) FROM first_table").Scan(&n); err != nil || n != 2 {
			t.Errorf("first_table has %d rows (%v); want 2, one per later migration", n, err)
		}
	})
}
