package server_test

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"

	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// A PostgreSQL database dropped under the running service (every new
// connection then fails with 3D000, database does not exist) is a database
// that cannot be reached: 503 UNAVAILABLE, not 500 INTERNAL_ERROR. The pool
// keeps no connection from before the drop (those answer 57P01 on their
// next use), so every request below must open a new one.
func TestDroppedDatabaseIsUnavailable(t *testing.T) {
	dbURL := testdb.MigratedPostgresURL(t)
	e := servertest.New(t, dbURL, servertest.WithoutWorkers())
	m := e.Merchant("Gone")
	e.REST("GET", "/wallets", m.TestSecret, nil).Expect(200)

	pool := e.App.DB.SQL()
	pool.SetMaxIdleConns(0) // closes the idle ones, and each one released from now on
	if n := pool.Stats().OpenConnections; n != 0 {
		t.Fatalf("%d connections still open before the drop", n)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("postgres", os.Getenv("TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(context.Background(), "DROP DATABASE "+strings.TrimPrefix(u.Path, "/")+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		r := e.REST("GET", "/wallets", m.TestSecret, nil)
		if r.Status != 503 || r.Code() != "UNAVAILABLE" {
			t.Errorf("request %d: %d %s; want 503 UNAVAILABLE", i, r.Status, r.Body)
		}
	}
	if n := pool.Stats().OpenConnections; n != 0 {
		t.Errorf("%d connections opened to a dropped database", n)
	}
}
