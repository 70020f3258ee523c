package server

import (
	"context"
	"fmt"
	"io"

	"merchantpay/internal/store"
)

const migrateUsage = `usage:
  server migrate status   # each migration, applied or pending
  server migrate up       # apply the pending ones (serve does it too, unless MIGRATE=false)`

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
		if err := db.Migrate(ctx); err != nil {
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
