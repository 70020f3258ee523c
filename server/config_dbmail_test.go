package server_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
	"merchantpay/server"
	"merchantpay/server/servertest"
)

func loadConfig(vars map[string]string) (server.Config, error) {
	return server.LoadConfig(func(k string) string { return vars[k] })
}

// DATABASE_MAX_CONNS and DATABASE_STATEMENT_TIMEOUT: unset they leave the
// defaults (the pool of one instance, no statement limit); set they are
// read; bad values are each named in the one configuration error.
func TestDatabaseConfig(t *testing.T) {
	c, err := loadConfig(nil)
	if err != nil || c.Database != (store.Options{}) {
		t.Fatalf("defaults: %+v, %v", c.Database, err)
	}
	c, err = loadConfig(map[string]string{"DATABASE_MAX_CONNS": "12", "DATABASE_STATEMENT_TIMEOUT": "1500ms"})
	if err != nil || c.Database != (store.Options{MaxConns: 12, StatementTimeout: 1500 * time.Millisecond}) {
		t.Fatalf("set: %+v, %v", c.Database, err)
	}
	if c, err = loadConfig(map[string]string{"DATABASE_STATEMENT_TIMEOUT": "0"}); err != nil || c.Database.StatementTimeout != 0 {
		t.Fatalf("0 (no limit): %+v, %v", c.Database, err)
	}
	for _, tc := range []struct{ name, value string }{
		{"DATABASE_MAX_CONNS", "0"}, {"DATABASE_MAX_CONNS", "-4"}, {"DATABASE_MAX_CONNS", "twenty"},
		{"DATABASE_STATEMENT_TIMEOUT", "30"}, {"DATABASE_STATEMENT_TIMEOUT", "-1s"}, {"DATABASE_STATEMENT_TIMEOUT", "500us"},
	} {
		_, err := loadConfig(map[string]string{tc.name: tc.value, "LOG_LEVEL": "loud"})
		if err == nil || !strings.Contains(err.Error(), tc.name+`="`+tc.value+`"`) || !strings.Contains(err.Error(), "LOG_LEVEL") {
			t.Errorf("%s=%s: %v", tc.name, tc.value, err)
		}
	}
}

// A request whose statement runs past DATABASE_STATEMENT_TIMEOUT (here it
// waits on a table another session holds locked) answers 503 UNAVAILABLE
// in the error envelope, not 500, and the service answers again once the
// lock is gone; the pool is DATABASE_MAX_CONNS large.
func TestStatementTimeoutAnswersUnavailable(t *testing.T) {
	url := testdb.MigratedPostgresURL(t)
	e := servertest.New(t, url, servertest.WithoutWorkers(),
		servertest.With("DATABASE_STATEMENT_TIMEOUT", "200ms"), servertest.With("DATABASE_MAX_CONNS", "5"))
	if got := e.App.DB.SQL().Stats().MaxOpenConnections; got != 5 {
		t.Fatalf("pool of %d connections, want 5", got)
	}
	m := e.Merchant("Acme Pay")
	e.REST("GET", "/wallets", m.TestSecret, nil).Expect(200)

	locker, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	ctx := context.Background()
	tx, err := locker.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "LOCK TABLE wallets IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	r := e.REST("GET", "/wallets", m.TestSecret, nil)
	if r.Status != 503 || r.Code() != "UNAVAILABLE" {
		t.Fatalf("behind a lock: %d %s", r.Status, r.Body)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("answered after %v, not at the 200 ms statement timeout", took)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	e.REST("GET", "/wallets", m.TestSecret, nil).Expect(200)
}

// SMTP_URL's TLS and AUTH forms are read at start-up; a wrong one is named
// without repeating the password.
func TestSMTPURLConfig(t *testing.T) {
	for _, ok := range []string{"smtps://u:p@mail.example.com", "smtp://u:p@mail.example.com:587?starttls=required&auth=login&from=a@b.test"} {
		if _, err := loadConfig(map[string]string{"SMTP_URL": ok}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"smtp://u:hunter2@h?starttls=always", "smtps://u:hunter2@h?starttls=required", "smtp://u:hunter2@h?auth=ntlm"} {
		_, err := loadConfig(map[string]string{"SMTP_URL": bad})
		if err == nil || !strings.Contains(err.Error(), "SMTP_URL") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
