package testdb

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
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
// builder killed midway left. It is not dropped at the end: no one process
// knows it is the last user, and the next run reuses it (a SQLite builder
// prunes those of other migrations left unused, template_sqlite.go). A
// copy of a template is the same database as a fresh one migrated here, so
// the service's start-up (and Open) finds no migration to apply on it.

// templateFormat is hashed into the templates' names: change it when what a
// migrated database holds changes other than through migration files,
// goose's version or store's version table (the way store migrates), so
// stale templates are not reused.
const templateFormat = "1"

// templatePrefix starts a template's name.
const templatePrefix = "mp_tmpl_"

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

// templateTimeout bounds finding or building a template; building migrates.
const templateTimeout = 2 * time.Minute
