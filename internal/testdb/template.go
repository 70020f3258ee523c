package testdb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"merchantpay/internal/store"
	"merchantpay/migrations"
)

// Migrated templates. Migrating costs a test far more than creating its
// database (on SQLite several times more), and every test that starts from a
// migrated database would pay it again for the same schema. So each kind of
// database is migrated once, into a template, and the tests that want a
// migrated database get a copy of it: PostgreSQL clones it (CREATE DATABASE
// ... TEMPLATE), SQLite copies the file.
//
// A template is named by the hash of its dialect's migration files, of the
// migrator (goose's module version and store's version table) and of
// templateFormat, so it is reused by every test process and every run until
// one of those changes, and test processes running at once (go test runs
// packages in parallel) share it instead of colliding: one builds it,
// holding a lock (an advisory lock on PostgreSQL, a file lock for SQLite),
// while the others wait for it. It is published complete or not at all:
// built under another name, then renamed; the next builder removes what a
// builder killed midway left. It is not
// dropped at the end: no one process knows it is the last user, and the
// next run reuses it. A copy of a template is the same database as a fresh
// one migrated here, so the service's start-up (and Open) finds no migration
// to apply on it.

// templateFormat is hashed into the templates' names: change it when what a
// migrated database holds changes other than through migration files,
// goose's version or store's version table (the way store migrates), so
// stale templates are not reused.
const templateFormat = "1"

// templateLockID is the PostgreSQL advisory lock, in the database
// TEST_DATABASE_URL names, held while looking for or building the template.
const templateLockID = 727275

const (
	templatePrefix = "mp_tmpl_"
	buildPrefix    = "mp_tmpl_build_"
)

// templateName is the name of a dialect's template: its prefix and the hash
// of the dialect's migrations and of the migrator.
func templateName(dialect string) (string, error) {
	return templateNameWith(dialect, migrator())
}

// templateNameWith is templateName with the migrator named by goose.
func templateNameWith(dialect, goose string) (string, error) {
	fsys, err := migrations.For(dialect)
	if err != nil {
		return "", err
	}
	names, err := fs.Glob(fsys, "*")
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "format %s\nmigrator %s\ntable %s\n", templateFormat, goose, store.VersionTable)
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", n, len(data))
		h.Write(data)
	}
	return templatePrefix + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// goosePath is the module of the migrator store uses.
const goosePath = "github.com/pressly/goose/v3"

// migrator names the version of goose this binary was built with: from
// the binary's module information when it has the dependencies' (test
// binaries have none), else from the lines of the module's go.mod that
// name goose, found from the working directory up (go test runs a test in
// its package's directory). "unknown" when neither can be read.
func migrator() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path != goosePath {
				continue
			}
			if m.Replace != nil {
				m = m.Replace
			}
			return m.Path + "@" + m.Version + " " + m.Sum
		}
	}
	dir, err := os.Getwd()
	if err != nil {
		return "unknown"
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			var lines []string
			for _, l := range strings.Split(string(data), "\n") {
				if strings.Contains(l, goosePath) {
					lines = append(lines, strings.TrimSpace(l))
				}
			}
			return strings.Join(lines, "; ")
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "unknown"
		}
		dir = up
	}
}

// templates caches, per process, the templates already found or built.
var templates struct {
	sync.Mutex
	postgres string
}

// postgresTemplate returns the name of the migrated PostgreSQL template on
// the server of base, building it if no process has yet. admin is connected
// to base.
func postgresTemplate(ctx context.Context, admin *sql.DB, base string) (string, error) {
	templates.Lock()
	defer templates.Unlock()
	if templates.postgres != "" {
		return templates.postgres, nil
	}
	name, err := templateName(Postgres)
	if err != nil {
		return "", err
	}
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", templateLockID); err != nil {
		return "", fmt.Errorf("template lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", templateLockID) //nolint:errcheck
	var exists bool
	if err := conn.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		if err := buildPostgresTemplate(ctx, conn, base, name); err != nil {
			return "", fmt.Errorf("template %s: %w", name, err)
		}
	}
	templates.postgres = name
	return name, nil
}

// buildPostgresTemplate migrates a new database and publishes it as name.
// The caller holds the template lock.
func buildPostgresTemplate(ctx context.Context, conn *sql.Conn, base, name string) error {
	// Only a holder of the lock builds, so a build database seen now was
	// left by a process that died building.
	rows, err := conn.QueryContext(ctx, "SELECT datname FROM pg_database WHERE starts_with(datname, $1)", buildPrefix)
	if err != nil {
		return err
	}
	var left []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		left = append(left, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, n := range left {
		if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+n+" WITH (FORCE)"); err != nil {
			return err
		}
	}
	build := fmt.Sprintf("%s%d", buildPrefix, os.Getpid())
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+build); err != nil {
		return err
	}
	published := false
	defer func() {
		if !published {
			conn.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS "+build+" WITH (FORCE)") //nolint:errcheck
		}
	}()
	buildURL, err := withDatabase(base, build)
	if err != nil {
		return err
	}
	if err := migrateAt(ctx, buildURL); err != nil {
		return err
	}
	// No session may be connected to a database being renamed or cloned:
	// the migration's connections have closed, and none may connect from
	// now on.
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+build+" RENAME TO "+name); err != nil {
		return err
	}
	published = true
	// IS_TEMPLATE lets any role with CREATEDB clone it, not only its owner
	// and superusers; it also makes DROP DATABASE refuse it until it is
	// unmarked (README's Tests section).
	_, err = conn.ExecContext(ctx, "ALTER DATABASE "+name+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
	return err
}

// migrateAt opens the database at dbURL, migrates it and closes it.
func migrateAt(ctx context.Context, dbURL string) error {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// copyFile copies the file at from to a new file at to.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// withDatabase is base with its database name replaced by name.
func withDatabase(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("TEST_DATABASE_URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// templateTimeout bounds finding or building a template; building migrates.
const templateTimeout = 2 * time.Minute
