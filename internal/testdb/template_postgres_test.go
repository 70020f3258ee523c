package testdb

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"merchantpay/internal/store"
)

// pgAdmin is a connection to TEST_DATABASE_URL's database, and that URL; it
// skips (or fails under REQUIRE_POSTGRES=1) as PostgresURL does.
func pgAdmin(t *testing.T) (*sql.DB, string) {
	t.Helper()
	PostgresURL(t) // skips or fails when PostgreSQL is not to be had
	base := os.Getenv("TEST_DATABASE_URL")
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin, base
}

var pgTestTemplates atomic.Int32

// pgTestTemplate is a source of a template of this test's own, dropped
// after it, whose builds are counted.
func pgTestTemplate(t *testing.T, admin *sql.DB, builds *atomic.Int32) *postgresSource {
	t.Helper()
	name := fmt.Sprintf("%stest_%d_%d", templatePrefix, os.Getpid(), pgTestTemplates.Add(1))
	t.Cleanup(func() { dropPostgresTemplate(t, admin, name) })
	return &postgresSource{name: name, build: func(ctx context.Context, conn *sql.Conn, base, name string) error {
		builds.Add(1)
		return buildPostgresTemplate(ctx, conn, base, name)
	}}
}

// dropPostgresTemplate drops the template name if it exists.
func dropPostgresTemplate(t *testing.T, admin *sql.DB, name string) {
	t.Helper()
	var exists bool
	if err := admin.QueryRow("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if !exists {
		return
	}
	if _, err := admin.Exec("ALTER DATABASE " + name + " IS_TEMPLATE false"); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("DROP DATABASE " + name); err != nil {
		t.Fatal(err)
	}
}

func databaseExists(t *testing.T, admin *sql.DB, name string) bool {
	t.Helper()
	var exists bool
	if err := admin.QueryRow("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

// A build database seen by a builder was left by one that died: dropped.
func TestPostgresTemplateDropsLeftBuild(t *testing.T) {
	admin, base := pgAdmin(t)
	left := buildPrefix + "0" // no process has pid 0
	if _, err := admin.Exec("CREATE DATABASE " + left); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec("DROP DATABASE IF EXISTS " + left) }) //nolint:errcheck
	var builds atomic.Int32
	p := pgTestTemplate(t, admin, &builds)
	if _, err := p.template(context.Background(), admin, base, ""); err != nil {
		t.Fatal(err)
	}
	if databaseExists(t, admin, left) {
		t.Errorf("left build database %s still there", left)
	}
}

// Two processes (two sources) on a cold cache: one builds, the other waits
// and uses its template.
func TestPostgresTemplateOneBuilder(t *testing.T) {
	admin, base := pgAdmin(t)
	var builds atomic.Int32
	first := pgTestTemplate(t, admin, &builds)
	second := &postgresSource{name: first.name, build: first.build}
	sources := []*postgresSource{first, second}
	names := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, p := range sources {
		wg.Go(func() { names[i], errs[i] = p.template(context.Background(), admin, base, "") })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || names[0] != names[1] {
		t.Fatalf("templates %v, errors %v", names, errs)
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds; want 1", n)
	}
}

// A template dropped during the run is built again for the next clone, and
// the clone is migrated.
func TestPostgresTemplateDroppedIsRebuilt(t *testing.T) {
	admin, base := pgAdmin(t)
	var builds atomic.Int32
	p := pgTestTemplate(t, admin, &builds)
	ctx := context.Background()
	clone := func(n int) string {
		t.Helper()
		name := fmt.Sprintf("t_%d_clone_%s_%d", os.Getpid(), p.name[len(templatePrefix):], n)
		t.Cleanup(func() { admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)") }) //nolint:errcheck
		if err := p.create(ctx, admin, base, name); err != nil {
			t.Fatalf("clone %d: %v", n, err)
		}
		return name
	}
	clone(1)
	dropPostgresTemplate(t, admin, p.name)
	second := clone(2)
	if n := builds.Load(); n != 2 {
		t.Errorf("%d builds; want 2", n)
	}
	u, err := withDatabase(base, second)
	if err != nil {
		t.Fatal(err)
	}
	if has, lacks := appliedMigrations(t, u); has == 0 || lacks != 0 {
		t.Errorf("clone of the rebuilt template has %d migrations applied and lacks %d", has, lacks)
	}
}

// appliedMigrations opens the database at u without migrating it and
// counts the migrations it has and those it lacks.
func appliedMigrations(t *testing.T, u string) (has, lacks int) {
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
