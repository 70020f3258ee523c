package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/postgres"
	"ariga.io/atlas/sql/schema"
	"ariga.io/atlas/sql/sqlite"
	"ariga.io/atlas/sql/sqltool"
	"github.com/pressly/goose/v3/database"
)

// Adoption. Releases before versioned migrations created and updated the
// schema with ent's auto-migration and recorded nothing: such a database has
// the service's tables and no applied migration. adopt brings it to the
// first migration (the baseline, which describes the schema those releases
// made) and records the baseline as applied, so that only later migrations
// run on it. It is the only code that knows about those releases.

// retiredIndexes were created by the auto-migrating releases' earlier
// schemas and dropped by later ones (auto-migration never drops an index, so
// those releases dropped these by name). A database last run by one of the
// earlier releases may still have them; adoption drops them. Names are
// ent's (table_columns).
var retiredIndexes = []string{
	// Replaced by (type, next_run_at) over rows with work ahead.
	"transaction_next_run_at",
	// The tenant mixin's (merchant_id, mode), on tables that have a longer
	// index leading with those columns.
	"cryptopayenrolment_merchant_id_mode", "event_merchant_id_mode", "fiataccount_merchant_id_mode",
	"transaction_merchant_id_mode", "wallet_merchant_id_mode", "webhookendpoint_merchant_id_mode",
	// Replaced in the first performance pass.
	"event_fanned_out", "ledgerentry_posting_id",
	// Unique, and redundant with the primary key (derived from the same
	// columns): concurrent first credits of an account failed on it.
	"ledgeraccount_owner_mode_currency_kind",
}

// adoptionMarker is a table every auto-migrating release created.
const adoptionMarker = "merchants"

// adopt adopts a database created by auto-migration, in one transaction,
// and returns the baseline's name; it does nothing to any other database.
// The caller holds the migration lock.
func (db *DB) adopt(ctx context.Context, fsys fs.FS) (string, error) {
	ok, err := db.adoptable(ctx)
	if err != nil || !ok {
		return "", err
	}
	name, version, stmts, err := baseline(fsys)
	if err != nil {
		return "", err
	}
	tx, err := db.sqlW.BeginTx(ctx, nil)
	if err != nil {
		return "", fmt.Errorf("store: adopting the schema: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck
	if err := db.toBaseline(ctx, tx, stmts); err != nil {
		return "", fmt.Errorf("store: adopting the schema as %s: %w", name, err)
	}
	if err := db.recordBaseline(ctx, tx, version); err != nil {
		return "", fmt.Errorf("store: adopting the schema as %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return "", fmt.Errorf("store: adopting the schema as %s: %w", name, err)
	}
	return name, nil
}

// MadeByAutoMigration reports whether the database was created by a release
// that used ent's auto-migration and is not yet adopted: Migrate will adopt
// it.
func (db *DB) MadeByAutoMigration(ctx context.Context) (bool, error) { return db.adoptable(ctx) }

// adoptable reports whether the database has the service's tables and no
// applied migration.
func (db *DB) adoptable(ctx context.Context) (bool, error) {
	has, err := db.tableExists(ctx, db.sqlW, adoptionMarker)
	if err != nil || !has {
		return false, err
	}
	versioned, err := db.tableExists(ctx, db.sqlW, VersionTable)
	if err != nil || !versioned {
		return true, err
	}
	var n int
	err = db.sqlW.QueryRowContext(ctx, "SELECT count(*) FROM "+VersionTable+" WHERE version_id > 0 AND is_applied").Scan(&n)
	return n == 0, err
}

// baseline reads the first migration in fsys: its name, version and "up"
// statements.
func baseline(fsys fs.FS) (name string, version int64, stmts []string, err error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil || len(names) == 0 {
		return "", 0, nil, fmt.Errorf("store: no migrations to adopt the schema with (%v)", err)
	}
	sort.Strings(names)
	name = names[0]
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return "", 0, nil, err
	}
	if _, err := fmt.Sscanf(name, "%d_", &version); err != nil {
		return "", 0, nil, fmt.Errorf("store: migration %s: no version in its name", name)
	}
	stmts, err = (&sqltool.GooseFile{LocalFile: migrate.NewLocalFile(path.Base(name), data)}).Stmts()
	if err != nil {
		return "", 0, nil, fmt.Errorf("store: migration %s: %w", name, err)
	}
	return name, version, stmts, nil
}

// toBaseline makes in tx what the baseline has and the database lacks:
// tables, columns and indexes that a database last run by an earlier
// auto-migrating release may miss. Nothing holding data is dropped (an
// earlier release's column stays); only the retired indexes go.
func (db *DB) toBaseline(ctx context.Context, tx *sql.Tx, stmts []string) error {
	want, err := db.baselineSchema(ctx, tx, stmts)
	if err != nil {
		return fmt.Errorf("reading the baseline: %w", err)
	}
	drv, err := db.atlasDriver(tx)
	if err != nil {
		return err
	}
	have, err := drv.InspectSchema(ctx, "", nil)
	if err != nil {
		return err
	}
	want.Name, want.Attrs = have.Name, have.Attrs
	changes, err := drv.SchemaDiff(have, want)
	if err != nil {
		return err
	}
	if add := additions(changes); len(add) > 0 {
		if err := drv.ApplyChanges(ctx, add); err != nil {
			return err
		}
	}
	for _, name := range retiredIndexes {
		if _, err := tx.ExecContext(ctx, "DROP INDEX IF EXISTS "+name); err != nil {
			return fmt.Errorf("dropping retired index %s: %w", name, err)
		}
	}
	return nil
}

// additions keeps the changes that add a table, a column or an index.
func additions(changes []schema.Change) []schema.Change {
	var out []schema.Change
	for _, c := range changes {
		switch c := c.(type) {
		case *schema.AddTable:
			out = append(out, c)
		case *schema.ModifyTable:
			var keep []schema.Change
			for _, tc := range c.Changes {
				switch tc.(type) {
				case *schema.AddColumn, *schema.AddIndex:
					keep = append(keep, tc)
				}
			}
			if len(keep) > 0 {
				out = append(out, &schema.ModifyTable{T: c.T, Changes: keep})
			}
		}
	}
	return out
}

// baselineSchema builds the baseline on a scratch database and reads it:
// an in-memory SQLite database, or on PostgreSQL a schema of tx's database
// dropped again before tx ends.
func (db *DB) baselineSchema(ctx context.Context, tx *sql.Tx, stmts []string) (*schema.Schema, error) {
	if !db.IsPostgres() {
		scratch, err := sql.Open("sqlite", "file:baseline?mode=memory")
		if err != nil {
			return nil, err
		}
		defer scratch.Close()
		scratch.SetMaxOpenConns(1) // one connection: one in-memory database
		for _, s := range stmts {
			if _, err := scratch.ExecContext(ctx, s); err != nil {
				return nil, err
			}
		}
		drv, err := sqlite.Open(scratch)
		if err != nil {
			return nil, err
		}
		return drv.InspectSchema(ctx, "", nil)
	}
	const scratch = "merchantpay_baseline"
	var searchPath string
	if err := tx.QueryRowContext(ctx, "SELECT current_setting('search_path')").Scan(&searchPath); err != nil {
		return nil, err
	}
	for _, s := range []string{"CREATE SCHEMA " + scratch, "SELECT set_config('search_path', '" + scratch + "', true)"} {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return nil, err
		}
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, "SELECT set_config('search_path', $1, true)", searchPath); err != nil {
		return nil, err
	}
	drv, err := postgres.Open(tx)
	if err != nil {
		return nil, err
	}
	s, err := drv.InspectSchema(ctx, scratch, nil)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, "DROP SCHEMA "+scratch+" CASCADE"); err != nil {
		return nil, err
	}
	return s, nil
}

func (db *DB) atlasDriver(tx *sql.Tx) (migrate.Driver, error) {
	if db.IsPostgres() {
		return postgres.Open(tx)
	}
	return sqlite.Open(tx)
}

// recordBaseline writes goose's version table as goose would have after
// applying the baseline.
func (db *DB) recordBaseline(ctx context.Context, tx *sql.Tx, version int64) error {
	d := database.DialectSQLite3
	if db.IsPostgres() {
		d = database.DialectPostgres
	}
	st, err := database.NewStore(d, VersionTable)
	if err != nil {
		return err
	}
	exists, err := db.tableExists(ctx, tx, VersionTable)
	if err != nil {
		return err
	}
	if !exists {
		if err := st.CreateVersionTable(ctx, tx); err != nil {
			return err
		}
	}
	var rows int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+VersionTable+" WHERE version_id = 0").Scan(&rows); err != nil {
		return err
	}
	if rows == 0 {
		if err := st.Insert(ctx, tx, database.InsertRequest{Version: 0}); err != nil {
			return err
		}
	}
	if err := st.Insert(ctx, tx, database.InsertRequest{Version: version}); err != nil {
		return fmt.Errorf("recording the baseline: %w", err)
	}
	return nil
}
