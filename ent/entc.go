//go:build ignore

package main

import (
	"log"

	"entgo.io/ent/entc"
	"entgo.io/ent/entc/gen"
)

func main() {
	err := entc.Generate("./schema", &gen.Config{
		Features: []gen.Feature{
			gen.FeatureIntercept,
			gen.FeatureLock,
			gen.FeatureModifier,
			gen.FeatureExecQuery,
			gen.FeatureUpsert,
			// migrate.NamedDiff: the versioned migrations in migrations/ are
			// generated from this schema (make migration NAME=...).
			gen.FeatureVersionedMigration,
		},
	})
	if err != nil {
		log.Fatalf("running ent codegen: %v", err)
	}
}
