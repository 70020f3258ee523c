package testdb

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSQLiteBuild stands for a migration: it counts its calls and takes a
// while, so builders started together overlap, then publishes a file.
func fakeSQLiteBuild(builds *atomic.Int32) func(ctx context.Context, dir, path string) error {
	return func(ctx context.Context, dir, path string) error {
		builds.Add(1)
		time.Sleep(200 * time.Millisecond)
		return os.WriteFile(path, []byte("migrated"), 0o644)
	}
}

// A build directory seen by a builder was left by one that died: removed.
func TestSQLiteTemplateRemovesLeftBuild(t *testing.T) {
	dir := t.TempDir()
	left := filepath.Join(dir, "build-123")
	if err := os.MkdirAll(left, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(left, "m.db"), []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	var builds atomic.Int32
	s := &sqliteSource{dir: dir, name: "mp_tmpl_test", build: fakeSQLiteBuild(&builds)}
	if _, err := s.template(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("left build directory still there: %v", err)
	}
}

// Two processes (two sources) on a cold cache: one builds, the other waits
// and uses its template.
func TestSQLiteTemplateOneBuilder(t *testing.T) {
	dir := t.TempDir()
	var builds atomic.Int32
	paths := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range paths {
		s := &sqliteSource{dir: dir, name: "mp_tmpl_test", build: fakeSQLiteBuild(&builds)}
		wg.Go(func() { paths[i], errs[i] = s.template(context.Background(), "") })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || paths[0] != paths[1] {
		t.Fatalf("templates %v, errors %v", paths, errs)
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds; want 1", n)
	}
}

// A template removed during the run is built again for the next copy.
func TestSQLiteTemplateRemovedIsRebuilt(t *testing.T) {
	dir := t.TempDir()
	var builds atomic.Int32
	s := &sqliteSource{dir: dir, name: "mp_tmpl_test", build: fakeSQLiteBuild(&builds)}
	ctx := context.Background()
	if err := s.copyTo(ctx, filepath.Join(dir, "a.db")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "mp_tmpl_test.db")); err != nil {
		t.Fatal(err)
	}
	if err := s.copyTo(ctx, filepath.Join(dir, "b.db")); err != nil {
		t.Fatalf("copy after the template was removed: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "b.db")); err != nil || string(data) != "migrated" {
		t.Errorf("copy holds %q, %v", data, err)
	}
	if n := builds.Load(); n != 2 {
		t.Errorf("%d builds; want 2", n)
	}
}

// A builder removes the templates of other migrations unused for a day, and
// using a template marks it used.
func TestSQLiteTemplatePrunesUnused(t *testing.T) {
	dir := t.TempDir()
	at := func(name string, age time.Duration) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		when := time.Now().Add(-age)
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
		return p
	}
	stale := at("mp_tmpl_stale.db", 48*time.Hour)
	recent := at("mp_tmpl_recent.db", time.Hour)
	used := at("mp_tmpl_used.db", 48*time.Hour)
	other := at("notes.db", 48*time.Hour)
	var builds atomic.Int32
	ctx := context.Background()
	// Another process uses its old template: that marks it used.
	if _, err := (&sqliteSource{dir: dir, name: "mp_tmpl_used", build: fakeSQLiteBuild(&builds)}).template(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := (&sqliteSource{dir: dir, name: "mp_tmpl_new", build: fakeSQLiteBuild(&builds)}).template(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("template unused for two days kept: %v", err)
	}
	for _, p := range []string{recent, used, other, filepath.Join(dir, "mp_tmpl_new.db")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", filepath.Base(p), err)
		}
	}
}
