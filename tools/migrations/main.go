// Command migrations writes the next versioned migration of each database
// (migrations/sqlite, migrations/postgres): the statements that take a
// database built by the migrations already there to the ent schema. It
// replays the existing files on a scratch database (SQLite in memory; a
// temporary database on the local PostgreSQL) and asks ent, through Atlas,
// for the difference. Run it after changing ent/schema:
//
//	make migration NAME=add_refunds
//
// It writes nothing when the schema and the migrations already agree.
//
// Some statements are not ent's to describe: a PostgreSQL table's storage
// parameters (ALTER TABLE ... SET (fillfactor = N)), which neither ent nor
// Atlas's inspection of PostgreSQL knows, so the difference computed after
// the replay never mentions them. Such a statement is added by hand to the
// new migration, below the generated ones and with a comment saying so,
// before that migration is released; then atlas.sum, the checksum of the
// directory that the replay verifies, is written again:
//
//	go run ./tools/migrations -rehash
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"time"

	atlasmigrate "ariga.io/atlas/sql/migrate"
	"ariga.io/atlas/sql/sqltool"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	_ "github.com/lib/pq"
	_ "modernc.org/sqlite"

	"merchantpay/ent/migrate"
)

func main() {
	name := flag.String("name", "", "what the migration does, in snake_case (e.g. add_refunds)")
	dir := flag.String("dir", "migrations", "the directory holding sqlite/ and postgres/")
	only := flag.String("dialect", "", "sqlite or postgres (default: both)")
	rehash := flag.Bool("rehash", false, "only write atlas.sum again, after a hand-written statement was added to a migration not yet released")
	flag.Parse()
	if *rehash {
		for _, d := range []string{"sqlite", "postgres"} {
			if *only != "" && *only != d {
				continue
			}
			if err := writeSum(filepath.Join(*dir, d)); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", d, err)
				os.Exit(1)
			}
		}
		return
	}
	if !regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(*name) {
		fmt.Fprintln(os.Stderr, "usage: make migration NAME=snake_case_name")
		os.Exit(2)
	}
	ctx := context.Background()
	for _, d := range []string{"sqlite", "postgres"} {
		if *only != "" && *only != d {
			continue
		}
		if err := generate(ctx, d, filepath.Join(*dir, d), *name); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", d, err)
			os.Exit(1)
		}
	}
}

func generate(ctx context.Context, kind, path, name string) error {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	dir, err := sqltool.NewGooseDir(path)
	if err != nil {
		return err
	}
	before, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	db, drvName, done, err := scratch(ctx, kind)
	if err != nil {
		return err
	}
	defer done()
	m, err := schema.NewMigrate(entsql.OpenDB(drvName, db),
		schema.WithDir(dir),
		schema.WithMigrationMode(schema.ModeReplay),
		schema.WithDialect(drvName),
		schema.WithFormatter(sqltool.GooseFormatter),
		// A migration may drop what the schema no longer has; its author
		// reads the file before committing it.
		schema.WithDropIndex(true),
		schema.WithDropColumn(true),
	)
	if err != nil {
		return err
	}
	if err := m.NamedDiff(ctx, name, migrate.Tables...); err != nil {
		return err
	}
	after, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	if len(after) == len(before) {
		fmt.Printf("%s: the migrations already match the ent schema; nothing written\n", kind)
		return nil
	}
	fmt.Printf("%s: wrote a migration in %s (read it before committing it)\n", kind, path)
	return nil
}

// writeSum writes the atlas.sum of the migrations in path.
func writeSum(path string) error {
	dir, err := sqltool.NewGooseDir(path)
	if err != nil {
		return err
	}
	sum, err := dir.Checksum()
	if err != nil {
		return err
	}
	return atlasmigrate.WriteSumFile(dir, sum)
}

// scratch opens an empty database to replay the migrations on.
func scratch(ctx context.Context, kind string) (*sql.DB, string, func(), error) {
	if kind == "sqlite" {
		db, err := sql.Open("sqlite", "file:dev?mode=memory&_pragma=foreign_keys(1)")
		if err != nil {
			return nil, "", nil, err
		}
		db.SetMaxOpenConns(1) // one connection: one in-memory database
		return db, dialect.SQLite, func() { db.Close() }, nil
	}
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	admin, err := sql.Open("postgres", base)
	if err != nil {
		return nil, "", nil, err
	}
	name := fmt.Sprintf("migrations_dev_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return nil, "", nil, fmt.Errorf("a scratch database on %s: %w", base, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		admin.Close()
		return nil, "", nil, err
	}
	u.Path = "/" + name
	q := u.Query()
	q.Set("search_path", "public")
	u.RawQuery = q.Encode()
	db, err := sql.Open("postgres", u.String())
	if err != nil {
		admin.Close()
		return nil, "", nil, err
	}
	return db, dialect.Postgres, func() {
		db.Close()
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	}, nil
}
