package testdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"

	"github.com/lib/pq"

	"merchantpay/internal/store"
)

// templateLockID is the PostgreSQL advisory lock, in the database
// TEST_DATABASE_URL names, held while looking for or building the template.
const templateLockID = 727275

// buildPrefix starts the name of a PostgreSQL template being built.
const buildPrefix = "mp_tmpl_build_"

// postgresTemplates is where this process finds its PostgreSQL template.
var postgresTemplates = &postgresSource{build: buildPostgresTemplate}

// postgresSource finds, or builds, a PostgreSQL template, and remembers it
// for this process.
type postgresSource struct {
	// name is the template's name; "" is templateName(Postgres).
	name string
	// build migrates a new database and publishes it as name; conn holds
	// the template lock.
	build func(ctx context.Context, conn *sql.Conn, base, name string) error

	mu     sync.Mutex
	cached string
}

// invalidCatalogName is PostgreSQL's code for a database that does not
// exist (here: a template dropped since this process found it).
const invalidCatalogName = "3D000"

// create creates the database db on the server of base as a clone of the
// template. admin is connected to base. A template dropped since this
// process found it is looked for, or built, again, once.
func (p *postgresSource) create(ctx context.Context, admin *sql.DB, base, db string) error {
	tmpl, err := p.template(ctx, admin, base, "")
	if err != nil {
		return fmt.Errorf("migrated template: %w", err)
	}
	_, err = admin.ExecContext(ctx, "CREATE DATABASE "+db+" TEMPLATE "+tmpl)
	var pe *pq.Error
	if errors.As(err, &pe) && pe.Code == invalidCatalogName {
		if tmpl, err = p.template(ctx, admin, base, tmpl); err != nil {
			return fmt.Errorf("migrated template, again: %w", err)
		}
		_, err = admin.ExecContext(ctx, "CREATE DATABASE "+db+" TEMPLATE "+tmpl)
	}
	return err
}

// template returns the name of the template on the server of base,
// building it if no process has yet. A remembered template named stale is
// not trusted: it was found missing.
func (p *postgresSource) template(ctx context.Context, admin *sql.DB, base, stale string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cached != "" && p.cached != stale {
		return p.cached, nil
	}
	p.cached = ""
	name := p.name
	if name == "" {
		n, err := templateName(Postgres)
		if err != nil {
			return "", err
		}
		name = n
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
		if err := p.build(ctx, conn, base, name); err != nil {
			return "", fmt.Errorf("template %s: %w", name, err)
		}
	}
	p.cached = name
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

// withDatabase is base with its database name replaced by name.
func withDatabase(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("TEST_DATABASE_URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}
