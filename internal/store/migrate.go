package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/pressly/goose/v3"

	"merchantpay/migrations"
)

// migrationLockID is the PostgreSQL advisory lock held while migrating. The
// releases that migrated with ent's auto-migration took the same lock, so an
// old and a new instance starting together do not migrate at once either.
const migrationLockID = 727274

// VersionTable is goose's record of the applied migrations.
const VersionTable = "goose_db_version"

// Migration is one migration and whether this database has it.
type Migration struct {
	// Name is the file's name, e.g. 20261126200902_baseline.sql.
	Name    string
	Version int64
	Applied bool
}

// Migrate applies the pending migrations of the embedded migrations
// directory of this database's dialect (see package migrations), each in
// its own transaction. A database created by the releases that used ent's
// auto-migration is first adopted (see adopt). Instances starting at once
// take turns: each migration is applied exactly once.
func (db *DB) Migrate(ctx context.Context) error {
	_, err := db.ApplyMigrations(ctx)
	return err
}

// Applied is what a migration run did.
type Applied struct {
	// Adopted names the baseline an auto-migrated database was adopted
	// as; empty when there was nothing to adopt.
	Adopted string
	// Migrations are the files applied, in order.
	Migrations []string
}

// ApplyMigrations is Migrate, reporting what it did.
func (db *DB) ApplyMigrations(ctx context.Context) (Applied, error) {
	fsys, err := migrations.For(db.dialectDir())
	if err != nil {
		return Applied{}, err
	}
	return db.migrate(ctx, fsys)
}

// MigrateFS is Migrate with the migrations in fsys (goose files at its
// root): tests pass their own.
func (db *DB) MigrateFS(ctx context.Context, fsys fs.FS) error {
	_, err := db.migrate(ctx, fsys)
	return err
}

func (db *DB) migrate(ctx context.Context, fsys fs.FS) (Applied, error) {
	var done Applied
	p, err := db.provider(fsys)
	if err != nil {
		return done, err
	}
	err = db.withMigrationLock(ctx, func() error {
		if done.Adopted, err = db.adopt(ctx, fsys); err != nil {
			return err
		}
		results, err := p.Up(ctx)
		for _, r := range results {
			done.Migrations = append(done.Migrations, path.Base(r.Source.Path))
		}
		if err != nil {
			return migrationError(err)
		}
		return nil
	})
	return done, err
}

// Migrations lists every embedded migration and whether it is applied. On
// a database created by auto-migration and not yet adopted, none is.
func (db *DB) Migrations(ctx context.Context) ([]Migration, error) {
	fsys, err := migrations.For(db.dialectDir())
	if err != nil {
		return nil, err
	}
	p, err := db.provider(fsys)
	if err != nil {
		return nil, err
	}
	applied := map[int64]bool{}
	exists, err := db.tableExists(ctx, db.sqlW, VersionTable)
	if err != nil {
		return nil, fmt.Errorf("store: migration status: %w", err)
	}
	if exists {
		// Read directly: goose's Status would create the version table.
		rows, err := db.sqlW.QueryContext(ctx, "SELECT version_id FROM "+VersionTable+" WHERE is_applied")
		if err != nil {
			return nil, fmt.Errorf("store: migration status: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				return nil, err
			}
			applied[v] = true
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	var out []Migration
	for _, s := range p.ListSources() {
		out = append(out, Migration{Name: path.Base(s.Path), Version: s.Version, Applied: applied[s.Version]})
	}
	return out, nil
}

// RequireMigrated fails, naming the first pending migration, unless every
// embedded migration is applied: a process told not to migrate must not run
// on a schema it does not know.
func (db *DB) RequireMigrated(ctx context.Context) error {
	ms, err := db.Migrations(ctx)
	if err != nil {
		return err
	}
	var pending []string
	for _, m := range ms {
		if !m.Applied {
			pending = append(pending, m.Name)
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("store: %d migration(s) pending (%s); apply them with `server migrate up`, or start without MIGRATE=false",
			len(pending), strings.Join(pending, ", "))
	}
	return nil
}

func (db *DB) dialectDir() string {
	if db.IsPostgres() {
		return "postgres"
	}
	return "sqlite"
}

func (db *DB) provider(fsys fs.FS) (*goose.Provider, error) {
	d := goose.DialectSQLite3 // goose's SQLite dialect works with any database/sql driver
	if db.IsPostgres() {
		d = goose.DialectPostgres
	}
	p, err := goose.NewProvider(d, db.sqlW, fsys,
		goose.WithTableName(VersionTable),
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("store: migrations: %w", err)
	}
	return p, nil
}

// migrationError names the failed migration's file and the database's error.
func migrationError(err error) error {
	var pe *goose.PartialError
	if errors.As(err, &pe) && pe.Failed != nil && pe.Failed.Source != nil {
		return fmt.Errorf("store: migration %s failed, and was rolled back: %w", path.Base(pe.Failed.Source.Path), pe.Err)
	}
	return fmt.Errorf("store: migrate: %w", err)
}

// withMigrationLock runs fn while no other process migrates this database:
// an advisory lock on PostgreSQL, an exclusive lock on a file beside the
// database on SQLite.
func (db *DB) withMigrationLock(ctx context.Context, fn func() error) error {
	if !db.IsPostgres() {
		f, err := os.OpenFile(strings.TrimPrefix(db.url, "sqlite:")+".migrate-lock", os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			return fmt.Errorf("store: migration lock: %w", err)
		}
		defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck
		return fn()
	}
	conn, err := db.sqlW.Conn(ctx)
	if err != nil {
		return fmt.Errorf("store: migration lock: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLockID); err != nil {
		return fmt.Errorf("store: migration lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLockID) //nolint:errcheck
	return fn()
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (db *DB) tableExists(ctx context.Context, q querier, name string) (bool, error) {
	query := `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = $1`
	if db.IsPostgres() {
		query = `SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = $1`
	}
	var n int
	if err := q.QueryRowContext(ctx, query, name).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}
