package server_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
	"merchantpay/server"
)

func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = server.Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

// Operators' migration commands: status lists each migration, MIGRATE=false
// refuses to start on pending migrations and names them, up applies them,
// and then the service starts without migrating.
func TestMigrateCommands(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		t.Setenv("DATABASE_URL", u)
		code, out, errs := runMain(t, "migrate", "status")
		if code != 0 || !strings.Contains(out, "pending  ") || !strings.Contains(out, "_baseline.sql") || !strings.Contains(out, "0 applied") {
			t.Fatalf("status on a fresh database: %d %q %q", code, out, errs)
		}
		t.Setenv("MIGRATE", "false")
		code, _, errs = runMain(t, "merchant", "create", "--name", "Early", "--email", "early@example.com")
		if code == 0 || !strings.Contains(errs, "pending") || !strings.Contains(errs, "_baseline.sql") || !strings.Contains(errs, "migrate up") {
			t.Fatalf("MIGRATE=false on a fresh database started: %d %q", code, errs)
		}
		code, out, errs = runMain(t, "migrate", "up")
		if code != 0 || !strings.Contains(out, "applied  ") || !strings.Contains(out, "0 pending") {
			t.Fatalf("migrate up: %d %q %q", code, out, errs)
		}
		code, out, errs = runMain(t, "merchant", "create", "--name", "Later", "--email", "later@example.com")
		if code != 0 || !strings.Contains(out, "SECK_TEST_") {
			t.Fatalf("MIGRATE=false after migrate up: %d %q %q", code, out, errs)
		}
		if code, _, _ = runMain(t, "migrate", "sideways"); code != 2 {
			t.Errorf("migrate sideways: exit %d, want 2 (usage)", code)
		}
	})
}

// A migration the database refuses stops start-up: the process exits
// non-zero naming the migration and the database's error, and the database
// keeps nothing of it.
func TestFailedMigrationStopsStartUp(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		db, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		// A table of the baseline's name, made by someone else.
		if _, err := db.SQL().ExecContext(ctx, "CREATE TABLE wallets (x integer)"); err != nil {
			t.Fatal(err)
		}
		t.Setenv("DATABASE_URL", u)
		t.Setenv("LISTEN_ADDR", "127.0.0.1:0")
		for _, args := range [][]string{{"serve"}, {"migrate", "up"}} {
			code, _, errs := runMain(t, args...)
			if code == 0 || !strings.Contains(errs, "_baseline.sql") || !strings.Contains(errs, "already exists") {
				t.Errorf("%v: exit %d, stderr %q; want non-zero, the migration's name and the database's error", args, code, errs)
			}
		}
		q := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT IN ('wallets', 'goose_db_version', 'sqlite_sequence')`
		if db.IsPostgres() {
			q = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name NOT IN ('wallets', 'goose_db_version', 'sqlite_sequence')`
		}
		var n int
		if err := db.SQL().QueryRowContext(ctx, q).Scan(&n); err != nil || n != 0 {
			t.Errorf("%d tables made by the failed migration (%v)", n, err)
		}
	})
}

// On a database made by auto-migration, status says so and up adopts it.
func TestMigrateUpAdoptsAutoMigratedDatabase(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		db, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		testdb.AutoMigrated(t, db)
		t.Setenv("DATABASE_URL", u)
		code, out, errs := runMain(t, "migrate", "status")
		if code != 0 || !strings.Contains(out, "made by a release that migrated automatically") {
			t.Fatalf("status: %d %q %q", code, out, errs)
		}
		code, out, errs = runMain(t, "migrate", "up")
		if code != 0 || !strings.Contains(out, "adopted") || !strings.Contains(out, "_baseline.sql") || !strings.Contains(out, "0 pending") {
			t.Fatalf("up: %d %q %q", code, out, errs)
		}
		if err := db.RequireMigrated(ctx); err != nil {
			t.Error(err)
		}
	})
}
