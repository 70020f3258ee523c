package store_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/lib/pq"

	"merchantpay/internal/apperr"
	"merchantpay/internal/store"
	"merchantpay/internal/testdb"
)

// A database that cannot be reached or will not serve is UNAVAILABLE
// (503), however the failure shows; a refused statement is not.
func TestClassifyUnavailable(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	for name, err := range map[string]error{
		"EOF":                      fmt.Errorf("ledger: %w", io.EOF),
		"unexpected EOF":           io.ErrUnexpectedEOF,
		"reset":                    reset,
		"refused":                  &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)},
		"bad connection":           driver.ErrBadConn,
		"admin shutdown":           &pq.Error{Code: "57P01", Message: "terminating connection due to administrator command"},
		"connection failure":       &pq.Error{Code: "08006", Message: "connection failure"},
		"too many connections":     &pq.Error{Code: "53300", Message: "sorry, too many clients already"},
		"not accepting at connect": store.ConnectFailed(&pq.Error{Code: "55000", Message: `database "x" is not currently accepting connections`}),
		"invalid db at connect":    store.ConnectFailed(&pq.Error{Code: "55000", Message: `cannot connect to invalid database "x"`}),
		"auth failed at connect":   store.ConnectFailed(&pq.Error{Code: "28P01", Message: "password authentication failed"}),
		"database is closed":       sql.ErrConnDone,
		"cannot connect now":       &pq.Error{Code: "57P03", Message: "the database system is starting up"},
		"i/o timeout (stalled DB)": &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded},
		"crash shutdown":           &pq.Error{Code: "57P02", Message: "terminating connection because of crash of another server process"},
		"database dropped":         &pq.Error{Code: "57P04", Message: "terminating connection due to database drop"},
		"no database at connect":   store.ConnectFailed(&pq.Error{Code: "3D000", Message: `database "x" does not exist`}),
		"out of memory":            &pq.Error{Code: "53200", Message: "out of memory"},
	} {
		if e := apperr.As(store.Classify(err)); e.Kind != apperr.Unavailable {
			t.Errorf("%s: %s, want UNAVAILABLE", name, e.Kind)
		}
	}
	for name, err := range map[string]error{
		"unique":                  &pq.Error{Code: "23505", Message: "duplicate key"},
		"other 55000":             &pq.Error{Code: "55000", Message: "object not in prerequisite state"},
		"55000 told by text only": &pq.Error{Code: "55000", Message: `database "x" is not currently accepting connections`},
		"query canceled by admin": &pq.Error{Code: "57000", Message: "operator intervention"},
		"no such table":           &pq.Error{Code: "42P01", Message: `relation "x" does not exist`},
		"no such schema":          &pq.Error{Code: "3F000", Message: `schema "x" does not exist`},
		"plain":                   errors.New("ledger: something else"),
		"already typed":           apperr.New(apperr.Validation, "bad"),
	} {
		if e := apperr.As(store.Classify(err)); e.Kind == apperr.Unavailable {
			t.Errorf("%s: classified UNAVAILABLE", name)
		}
	}
}

// A session the server will not open is UNAVAILABLE whatever its code
// and whatever language the server answers in: here a database that does
// not exist (3D000) and one that takes no connections (55000).
func TestClassifyConnectRefusal(t *testing.T) {
	u := testdb.PostgresURL(t)
	ctx := context.Background()
	admin, err := sql.Open("postgres", os.Getenv("TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := strings.TrimPrefix(mustParse(t, u).Path, "/")
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+name+" WITH ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	missing := mustParse(t, u)
	missing.Path = "/" + name + "_missing"
	for what, dbURL := range map[string]string{"not accepting": u, "missing": missing.String()} {
		db, err := store.Open(ctx, dbURL)
		if err == nil {
			db.Close()
			t.Fatalf("%s: opened", what)
		}
		if e := apperr.As(store.Classify(err)); e.Kind != apperr.Unavailable {
			t.Errorf("%s: %v is %s, want UNAVAILABLE", what, err, e.Kind)
		}
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A unique index's refusal is told by its code on both databases, not by
// its text; another constraint's is not a unique violation.
func TestIsUniqueViolationByCode(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, u string) {
		db := testdb.Open(t, u)
		ctx := context.Background()
		for _, q := range []string{"CREATE TABLE uv (a TEXT UNIQUE, b TEXT NOT NULL)", "INSERT INTO uv VALUES ('x', 'y')"} {
			if _, err := db.SQL().ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		_, err := db.SQL().ExecContext(ctx, "INSERT INTO uv VALUES ('x', 'y')")
		if !store.IsUniqueViolation(err) {
			t.Errorf("a duplicate key: %v is not a unique violation", err)
		}
		_, err = db.SQL().ExecContext(ctx, "INSERT INTO uv VALUES ('z', NULL)")
		if err == nil || store.IsUniqueViolation(err) {
			t.Errorf("a NULL in a NOT NULL column: %v taken for a unique violation", err)
		}
	})
}
