package testdb

import (
	"strings"
	"testing"
)

// A goose upgrade names a new template.
func TestTemplateNameHashesMigrator(t *testing.T) {
	if m := migrator(); !strings.Contains(m, goosePath+" v3.") {
		t.Errorf("migrator %q names no goose version", m)
	}
	a, err := templateNameWith(SQLite, goosePath+" v3.30.0")
	if err != nil {
		t.Fatal(err)
	}
	b, err := templateNameWith(SQLite, goosePath+" v3.31.0")
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Errorf("goose v3.30.0 and v3.31.0 share the template %s", a)
	}
}
