// Package testdb gives each test a fresh database: SQLite always, and
// PostgreSQL too when TEST_DATABASE_URL is set (REQUIRE_POSTGRES=1 makes a
// missing PostgreSQL a failure instead of a skip).
//
// Two kinds of fresh database: empty ones (Each, SQLiteURL, PostgresURL),
// for tests of migration itself (adoption, upgrades, refusing an unmigrated
// database), and migrated ones (EachMigrated, MigratedSQLiteURL,
// MigratedPostgresURL), copies of a template migrated once (template.go),
// for every other test. Open migrates either; on a migrated one it finds
// nothing to do, as the service's start-up does.
package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"merchantpay/internal/store"
	"merchantpay/migrations"
)

// Kinds of database.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Each runs fn as a subtest once per available database, with a fresh,
// empty (not migrated) database URL.
func Each(t *testing.T, fn func(t *testing.T, dbURL string)) {
	t.Helper()
	t.Run(SQLite, func(t *testing.T) { fn(t, SQLiteURL(t)) })
	t.Run(Postgres, func(t *testing.T) { fn(t, PostgresURL(t)) })
}

// EachMigrated runs fn as a subtest once per available database, with a
// fresh, migrated database URL.
func EachMigrated(t *testing.T, fn func(t *testing.T, dbURL string)) {
	t.Helper()
	t.Run(SQLite, func(t *testing.T) { fn(t, MigratedSQLiteURL(t)) })
	t.Run(Postgres, func(t *testing.T) { fn(t, MigratedPostgresURL(t)) })
}

// SQLiteURL is a fresh, empty SQLite database in the test's temporary
// directory.
func SQLiteURL(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "test.db")
}

// MigratedSQLiteURL is a fresh, migrated SQLite database in the test's
// temporary directory: a copy of the template.
func MigratedSQLiteURL(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), templateTimeout)
	defer cancel()
	path := filepath.Join(t.TempDir(), "test.db")
	if err := sqliteTemplates.copyTo(ctx, path); err != nil {
		t.Fatalf("sqlite: copy of the migrated template: %v", err)
	}
	return "sqlite:" + path
}

var counter atomic.Int64

// PostgresURL creates a fresh, empty PostgreSQL database, dropped after the
// test. It skips (or fails under REQUIRE_POSTGRES=1) when none is
// configured.
func PostgresURL(t testing.TB) string {
	t.Helper()
	return postgresDatabase(t, false)
}

// MigratedPostgresURL is PostgresURL with a migrated database: a clone of
// the template.
func MigratedPostgresURL(t testing.TB) string {
	t.Helper()
	return postgresDatabase(t, true)
}

func postgresDatabase(t testing.TB, migrated bool) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("REQUIRE_POSTGRES") == "1" {
			t.Fatal("REQUIRE_POSTGRES=1 but TEST_DATABASE_URL is not set")
		}
		t.Skip("postgres: TEST_DATABASE_URL not set")
	}
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), templateTimeout)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		if os.Getenv("REQUIRE_POSTGRES") == "1" {
			t.Fatalf("postgres at TEST_DATABASE_URL does not answer: %v", err)
		}
		t.Skipf("postgres does not answer: %v", err)
	}
	name := fmt.Sprintf("t_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, counter.Add(1))
	if migrated {
		err = postgresTemplates.create(ctx, admin, base, name)
	} else {
		_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name)
	}
	if err != nil {
		t.Fatalf("postgres: create database: %v", err)
	}
	t.Cleanup(func() {
		a, err := sql.Open("postgres", base)
		if err != nil {
			return
		}
		defer a.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = a.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	})
	u, err := withDatabase(base, name)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	return u
}

// Open opens the database at dbURL, closed after the test, and migrates it:
// an empty one is migrated, a migrated one has nothing to apply.
func Open(t testing.TB, dbURL string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("open %s: %v", strings.SplitN(dbURL, ":", 2)[0], err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// AutoMigrated gives db the schema the releases before versioned
// migrations made by auto-migration: the first (baseline) migration's
// statements, run without goose recording them. Later migrations are what
// adoption must then apply.
func AutoMigrated(t testing.TB, db *store.DB) {
	t.Helper()
	dir := SQLite
	if db.IsPostgres() {
		dir = Postgres
	}
	fsys, err := migrations.For(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil || len(names) == 0 {
		t.Fatalf("no migrations: %v", err)
	}
	sort.Strings(names)
	data, err := fs.ReadFile(fsys, names[0])
	if err != nil {
		t.Fatal(err)
	}
	up, _, _ := strings.Cut(string(data), "-- +goose Down")
	if _, err := db.SQL().ExecContext(context.Background(), strings.TrimPrefix(strings.TrimSpace(up), "-- +goose Up")); err != nil {
		t.Fatalf("baseline %s: %v", names[0], err)
	}
}
