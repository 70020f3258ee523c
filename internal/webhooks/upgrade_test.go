package webhooks

import (
	"context"
	"io/fs"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"merchantpay/ent/event"
	"merchantpay/ent/webhookdelivery"
	"merchantpay/internal/clock"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/migrations"
)

// An upgrade to the fan-out queue loses no event: a database at the
// migration before it, holding an event not yet fanned out and one already
// fanned out, is migrated; the fan-out then delivers the first, once, and
// leaves the second alone.
func TestUpgradeFansOutWaitingEvents(t *testing.T) {
	testdb.Each(t, func(t *testing.T, url string) {
		ctx := context.Background()
		db, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.MigrateFS(ctx, migrationsBefore(t, db, "_event_fanouts.sql")); err != nil {
			t.Fatalf("migrating to the release before: %v", err)
		}
		now := time.Now().UTC().Truncate(time.Millisecond)
		tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
		// As the release before wrote them.
		query, args := entsql.Dialect(db.Dialect).Insert(event.Table).
			Columns(event.FieldMerchantID, event.FieldMode, event.FieldEventID, event.FieldType,
				event.FieldPayload, event.FieldCreatedAt, event.FieldFannedOut).
			Values(tn.MerchantID, tn.Mode, "evt_waiting", "deposit.success", []byte(`{}`), now, false).
			Values(tn.MerchantID, tn.Mode, "evt_done", "deposit.success", []byte(`{}`), now, true).
			Query()
		if _, err := db.SQL().ExecContext(ctx, query, args...); err != nil {
			t.Fatal(err)
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("upgrading: %v", err)
		}

		clk := clock.NewFake(now)
		u := "http://127.0.0.1:1/hook"
		if _, err := New(db, clk, true, nil).Create(tenant.With(ctx, tn), nil, CreateInput{URL: &u}); err != nil {
			t.Fatal(err)
		}
		d := NewDispatcher(db, clk, DispatcherConfig{})
		sys := tenant.System(ctx)
		for range 2 { // the second finds nothing left
			if err := d.fanOut(sys, func() {}); err != nil {
				t.Fatal(err)
			}
		}
		for id, want := range map[string]int{"evt_waiting": 1, "evt_done": 0} {
			n, err := db.Reader().WebhookDelivery.Query().Where(webhookdelivery.EventID(id)).Count(sys)
			if err != nil || n != want {
				t.Errorf("%s: %d deliveries (%v), want %d", id, n, err, want)
			}
		}
		if n, err := db.Reader().EventFanout.Query().Count(sys); err != nil || n != 0 {
			t.Errorf("%d events still queued (%v)", n, err)
		}
	})
}

// migrationsBefore is db's dialect's migrations up to, not including, the
// one whose name ends with suffix.
func migrationsBefore(t *testing.T, db *store.DB, suffix string) fs.FS {
	t.Helper()
	dir := testdb.SQLite
	if db.IsPostgres() {
		dir = testdb.Postgres
	}
	all, err := migrations.For(dir)
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(all, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	out := fstest.MapFS{}
	for _, name := range names {
		if strings.HasSuffix(name, suffix) {
			return out
		}
		data, err := fs.ReadFile(all, name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = &fstest.MapFile{Data: data}
	}
	t.Fatalf("no migration ends with %s", suffix)
	return nil
}
