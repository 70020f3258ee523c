package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"merchantpay/internal/store"
)

const migrateUsage = `usage:
  server migrate status   # each migration, applied or pending
  server migrate up       # apply the pending ones (serve does it too, unless MIGRATE=false)`

// prepareSchema runs at every start: it applies the pending migrations and
// logs what it did, or with MIGRATE=false only checks that none is pending.
func prepareSchema(ctx context.Context, db *store.DB, cfg Config, log *slog.Logger) error {
	if cfg.NoMigrate {
		return db.RequireMigrated(ctx)
	}
	done, err := db.ApplyMigrations(ctx)
	logApplied(log, done)
	return err
}

func logApplied(log *slog.Logger, done store.Applied) {
	if done.Adopted != "" {
		log.Info("adopted the schema made by auto-migration", "as", done.Adopted)
	}
	for _, m := range done.Migrations {
		log.Info("migration applied", "migration", m)
	}
}

// migrateCmd is `migrate status|up`, for operators who apply migrations
// before starting the service (MIGRATE=false).
func migrateCmd(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 || (args[0] != "status" && args[0] != "up") {
		fmt.Fprintln(stderr, migrateUsage)
		return 2
	}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	defer db.Close()
	if args[0] == "up" {
		done, err := db.ApplyMigrations(ctx)
		if done.Adopted != "" {
			fmt.Fprintf(stdout, "adopted  the schema made by auto-migration as %s\n", done.Adopted)
		}
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 1
		}
	}
	ms, err := db.Migrations(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	pending := 0
	for _, m := range ms {
		state := "applied"
		if !m.Applied {
			state = "pending"
			pending++
		}
		fmt.Fprintf(stdout, "%-8s %s\n", state, m.Name)
	}
	fmt.Fprintf(stdout, "%d applied, %d pending (%s)\n", len(ms)-pending, pending, db.Dialect)
	if auto, err := db.MadeByAutoMigration(ctx); err == nil && auto {
		fmt.Fprintln(stdout, "This database was made by a release that migrated automatically; `migrate up` adopts it (no data changes).")
	}
	return 0
}
