package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
)

// The PostgreSQL pool holds at most DATABASE_MAX_CONNS connections
// (DefaultMaxConns when unset); SQLite keeps its one writer whatever is asked.
func TestPoolSize(t *testing.T) {
	testdb.Each(t, func(t *testing.T, url string) {
		ctx := context.Background()
		for _, tc := range []struct {
			opt        store.Options
			onPostgres int
		}{{store.Options{}, store.DefaultMaxConns}, {store.Options{MaxConns: 7}, 7}} {
			db, err := store.OpenWith(ctx, url, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if db.IsPostgres() {
				want = tc.onPostgres
			}
			if got := db.SQL().Stats().MaxOpenConnections; got != want {
				t.Errorf("%+v: pool of %d connections, want %d", tc.opt, got, want)
			}
			db.Close()
		}
	})
}

// DATABASE_STATEMENT_TIMEOUT is PostgreSQL's statement_timeout on every
// connection of the pool; a statement past it is cancelled by the server
// and classified UNAVAILABLE, and the connection serves on.
func TestStatementTimeout(t *testing.T) {
	url := testdb.PostgresURL(t)
	ctx := context.Background()
	db, err := store.OpenWith(ctx, url, store.Options{StatementTimeout: 200 * time.Millisecond, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Both connections of the pool, held at once, carry the setting.
	var held []*sql.Conn
	for i := range 2 {
		c, err := db.SQL().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		var got string
		if err := c.QueryRowContext(ctx, "SHOW statement_timeout").Scan(&got); err != nil || got != "200ms" {
			t.Fatalf("connection %d: statement_timeout %q, %v; want 200ms", i+1, got, err)
		}
	}
	for _, c := range held {
		c.Close()
	}

	start := time.Now()
	_, err = db.SQL().ExecContext(ctx, "SELECT pg_sleep(10)")
	took := time.Since(start)
	if err == nil {
		t.Fatal("a 10 s statement outlived a 200 ms statement_timeout")
	}
	if took > 8*time.Second {
		t.Fatalf("the statement ended after %v, not at its 200 ms timeout", took)
	}
	e := apperr.As(store.Classify(err))
	if e.Kind != apperr.Unavailable || e.Kind.Status() != 503 {
		t.Fatalf("%v classified %s (%d), want UNAVAILABLE (503)", err, e.Kind, e.Kind.Status())
	}
	var one int
	if err := db.SQL().QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after the timeout: %d, %v", one, err)
	}

	// Without the option the server's own setting stands.
	plain, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	var got string
	if err := plain.SQL().QueryRowContext(ctx, "SHOW statement_timeout").Scan(&got); err != nil || got == "200ms" {
		t.Fatalf("without the option: statement_timeout %q, %v", got, err)
	}
}
