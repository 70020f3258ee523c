// Package migrations holds the database schema as versioned SQL migrations,
// one directory per database (goose's file format). They are generated from
// ent/schema with `make migration NAME=...` and never edited after release
// (but for a down part that does not undo its up part, which
// TestEveryDownUndoesItsUp finds): a change to the schema is a new file.
// atlas.sum is the generator's checksum of the directory.
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// For returns the migrations of a database: "sqlite" or "postgres".
func For(dialect string) (fs.FS, error) {
	return fs.Sub(files, dialect)
}
