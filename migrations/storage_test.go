package migrations_test

import (
	"context"
	"testing"

	"github.com/lib/pq"

	"merchantpay/internal/testdb"
)

// Storage parameters are written by hand in the PostgreSQL migrations:
// neither ent nor Atlas describes them, so the test that the migrations
// build the ent schema cannot notice one lost when a migration is
// regenerated. This test holds them.
func TestPostgresStorageParameters(t *testing.T) {
	db := testdb.Open(t, testdb.PostgresURL(t))
	want := map[string]string{
		// Room on each page for the payout worker's lease updates to be HOT.
		"transactions": "fillfactor=70",
	}
	for table, param := range want {
		var opts []string
		err := db.SQL().QueryRowContext(context.Background(),
			"SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = $1::regclass", table).Scan(pq.Array(&opts))
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		found := false
		for _, o := range opts {
			found = found || o == param
		}
		if !found {
			t.Errorf("%s has storage parameters %v; want %s", table, opts, param)
		}
	}
}
