package testdb

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"merchantpay/internal/store"
)

// SQLite templates are files in one directory under the system's temporary
// one, shared by every test process. A process builds one only while it
// holds an exclusive lock on a file in that directory (as store does while
// migrating a SQLite database), so processes starting on a cold cache wait
// for the first one's template instead of each migrating its own.
//
// Templates of other migrations pile up as migrations change. A file's
// modification time tells when it was last used (each process that uses a
// template touches it), so a builder removes those of other names unused
// for a day. PostgreSQL keeps no such time cheaply, so its templates are
// left for a person to drop.

// sqliteTemplates is where this process finds its SQLite templates.
var sqliteTemplates = &sqliteSource{
	dir:   filepath.Join(os.TempDir(), "merchantpay-testdb"),
	build: buildSQLiteTemplate,
}

// sqliteSource finds, or builds, a SQLite template in dir, and remembers it
// for this process.
type sqliteSource struct {
	dir string
	// name is the template's name; "" is templateName(SQLite).
	name string
	// build migrates a new database and publishes it at path.
	build func(ctx context.Context, dir, path string) error

	mu   sync.Mutex
	path string
}

// sqliteLockFile is the file in the templates' directory locked while
// looking for or building a template.
const sqliteLockFile = ".build-lock"

// copyTo copies the template to a new file at to. A template removed since
// this process found it is looked for, or built, again, once.
func (s *sqliteSource) copyTo(ctx context.Context, to string) error {
	tmpl, err := s.template(ctx, "")
	if err != nil {
		return fmt.Errorf("migrated template: %w", err)
	}
	err = copyFile(tmpl, to)
	if errors.Is(err, fs.ErrNotExist) {
		if tmpl, err = s.template(ctx, tmpl); err != nil {
			return fmt.Errorf("migrated template, again: %w", err)
		}
		err = copyFile(tmpl, to)
	}
	return err
}

// template returns the path of the template, building it if no process has
// yet. A remembered template at stale is not trusted: it was found missing.
func (s *sqliteSource) template(ctx context.Context, stale string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.path != "" && s.path != stale {
		return s.path, nil
	}
	s.path = ""
	name := s.name
	if name == "" {
		n, err := templateName(SQLite)
		if err != nil {
			return "", err
		}
		name = n
	}
	path := filepath.Join(s.dir, name+".db")
	if _, err := os.Stat(path); err != nil {
		if err := s.buildLocked(ctx, path); err != nil {
			return "", fmt.Errorf("template %s: %w", path, err)
		}
	} else {
		// Marks it used, for pruning. A template another user built may
		// not be ours to touch: it is then only pruned sooner.
		now := time.Now()
		_ = os.Chtimes(path, now, now)
	}
	s.path = path
	return path, nil
}

// buildLocked takes the build lock and builds the template at path, unless
// another process published it while this one waited.
func (s *sqliteSource) buildLocked(ctx context.Context, path string) error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, sqliteLockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("template lock: %w", err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("template lock: %w", err)
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	// Only a holder of the lock builds, so a build directory seen now was
	// left by a process that died building.
	left, err := filepath.Glob(filepath.Join(s.dir, "build-*"))
	if err != nil {
		return err
	}
	for _, d := range left {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	if err := pruneSQLiteTemplates(s.dir, path); err != nil {
		return err
	}
	return s.build(ctx, s.dir, path)
}

// unusedFor is how long a template of other migrations may go unused before
// a builder removes it.
const unusedFor = 24 * time.Hour

// pruneSQLiteTemplates removes the templates in dir, other than the one at
// keep, that no process has used for unusedFor. A process that still
// remembers one builds it again (copyTo).
func pruneSQLiteTemplates(dir, keep string) error {
	old, err := filepath.Glob(filepath.Join(dir, templatePrefix+"*.db"))
	if err != nil {
		return err
	}
	for _, p := range old {
		fi, err := os.Stat(p)
		if err != nil || p == keep || time.Since(fi.ModTime()) < unusedFor {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// buildSQLiteTemplate migrates a new database and publishes a copy of it at
// path. The caller holds the build lock.
func buildSQLiteTemplate(ctx context.Context, dir, path string) error {
	build, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(build)
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(build, "m.db"))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	// VACUUM INTO writes one self-contained file, whatever the WAL holds.
	out := filepath.Join(build, "out.db")
	if _, err := db.SQL().ExecContext(ctx, "VACUUM INTO '"+strings.ReplaceAll(out, "'", "''")+"'"); err != nil {
		return err
	}
	return os.Rename(out, path)
}
