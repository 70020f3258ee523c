package testdb_test

import (
	"context"
	"strings"
	"testing"

	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
)

func TestOpen(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) { testdb.Open(t, u) })
}

// applied opens the database at u without migrating it and counts the
// migrations it has and those it lacks.
func applied(t *testing.T, u string) (has, lacks int) {
	t.Helper()
	db, err := store.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ms, err := db.Migrations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Applied {
			has++
		} else {
			lacks++
		}
	}
	return has, lacks
}

func TestEachIsEmpty(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		if has, lacks := applied(t, u); has != 0 || lacks == 0 {
			t.Fatalf("empty database has %d migrations applied and lacks %d", has, lacks)
		}
	})
}

// A migrated database has every migration, so start-up applies none; and
// each test's copy is its own.
func TestEachMigrated(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, u string) {
		if has, lacks := applied(t, u); has == 0 || lacks != 0 {
			t.Fatalf("migrated database has %d migrations applied and lacks %d", has, lacks)
		}
		db, err := store.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		done, err := db.ApplyMigrations(context.Background())
		if err != nil || done.Adopted != "" || len(done.Migrations) != 0 {
			t.Fatalf("migrating a migrated database: %+v, %v", done, err)
		}
		if _, err := db.SQL().Exec("CREATE TABLE only_here (id integer)"); err != nil {
			t.Fatal(err)
		}
		other := testdb.MigratedSQLiteURL(t)
		if strings.HasPrefix(u, "postgres") {
			other = testdb.MigratedPostgresURL(t)
		}
		o, err := store.Open(context.Background(), other)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if _, err := o.SQL().Exec("CREATE TABLE only_here (id integer)"); err != nil {
			t.Fatalf("another copy sees this one's table: %v", err)
		}
	})
}
