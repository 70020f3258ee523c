package events_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/eventfanout"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/events/eventtest"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/present/txview"
)

// Every way of writing events queues each for fan-out in the same
// transaction: Emit and EmitAll, and Rows, whose queue rows go in the
// statement that carries it (PostgreSQL) or right after it (SQLite). A
// rolled-back transaction queues nothing.
func TestEventsAreQueuedForFanOut(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		ob := events.New(db, clock.NewFake(time.Now()))
		tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
		ctx := tenant.With(context.Background(), tn)
		err := db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			var ts []*ent.Transaction
			for range 3 {
				row, err := eventtest.Transaction(ctx, tx)
				if err != nil {
					return err
				}
				ts = append(ts, row)
			}
			if err := ob.Emit(ctx, tx, events.DepositSuccess, ts[0]); err != nil {
				return err
			}
			if err := ob.EmitAll(ctx, tx, events.DepositPending, ts[1:]); err != nil {
				return err
			}
			st, err := ob.Rows(ctx, tx, events.WithdrawalPending, ts[1:])
			if err != nil {
				return err
			}
			return carry(ctx, db, tx, st)
		})
		if err != nil {
			t.Fatal(err)
		}
		sys := tenant.System(ctx)
		var want []int64
		for _, w := range []struct {
			typ  string
			rows int
		}{{events.DepositSuccess, 1}, {events.DepositPending, 2}, {events.WithdrawalPending, 2}} {
			rows, err := db.Reader().Event.Query().Where(event.Type(w.typ)).IDs(sys)
			if err != nil || len(rows) != w.rows {
				t.Fatalf("%s events: %v, %v; want %d", w.typ, rows, err, w.rows)
			}
			want = append(want, rows...)
		}
		queued, err := db.Reader().EventFanout.Query().IDs(sys)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(queued)
		slices.Sort(want)
		if !slices.Equal(queued, want) {
			t.Fatalf("queued %v, want every event %v", queued, want)
		}

		err = db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			row, err := eventtest.Transaction(ctx, tx)
			if err != nil {
				return err
			}
			if err := ob.Emit(ctx, tx, events.DepositSuccess, row); err != nil {
				return err
			}
			return errRollback
		})
		if !errors.Is(err, errRollback) {
			t.Fatal(err)
		}
		if n, err := db.Reader().EventFanout.Query().Count(sys); err != nil || n != len(want) {
			t.Fatalf("after a rollback %d queued (%v), want %d", n, err, len(want))
		}
	})
}

var errRollback = errors.New("roll back")

// carry sends st as ledger.Service.Payout does: on PostgreSQL as a WITH
// clause of one statement that checks every row was written, on SQLite
// with ExecRows.
func carry(ctx context.Context, db *store.DB, tx *ent.Tx, st store.Stmt) error {
	if !db.IsPostgres() {
		return store.ExecRows(ctx, tx, st)
	}
	ctes, cond, args := store.CTEs([]store.Stmt{st})
	rows, err := tx.QueryContext(ctx, "WITH "+ctes+" SELECT "+cond, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var ok bool
	if rows.Next() {
		if err := rows.Scan(&ok); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if !ok {
		return store.ErrWroteNothing
	}
	return nil
}

// EmitAll stores one event about each of its transactions, in their
// order, each of its transaction's tenant and carrying its transaction as
// GET /transactions shows it, and queues each for fan-out; a context that
// acts for no tenant and is not the system is refused, as the tenant rule
// refuses any write.
func TestEmitAllStoresAnEventPerTransaction(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		at := time.Date(2026, 11, 27, 4, 5, 6, 7e6, time.UTC)
		ob := events.New(db, clock.NewFake(at))
		tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
		ctx := tenant.With(context.Background(), tn)
		var ts []*ent.Transaction
		err := db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			for range 3 {
				row, err := eventtest.Transaction(ctx, tx)
				if err != nil {
					return err
				}
				ts = append(ts, row)
			}
			return ob.EmitAll(ctx, tx, events.DepositSuccess, ts)
		})
		if err != nil {
			t.Fatal(err)
		}
		sys := tenant.System(ctx)
		stored, err := db.Reader().Event.Query().Order(ent.Asc(event.FieldID)).All(sys)
		if err != nil || len(stored) != len(ts) {
			t.Fatalf("stored %d events (%v), want %d", len(stored), err, len(ts))
		}
		for i, s := range stored {
			payload, err := txview.JSON(ts[i])
			if err != nil {
				t.Fatal(err)
			}
			if s.TransactionRef != ts[i].Reference || !strings.HasPrefix(s.EventID, "evt_") || s.Type != events.DepositSuccess ||
				s.MerchantID != tn.MerchantID || s.Mode != tn.Mode || !slices.Equal(s.Payload, payload) ||
				!s.CreatedAt.Equal(at) || !s.FannedOut || s.TraceParent != nil {
				t.Fatalf("event %d (of transaction %s): stored %s about %s: %+v",
					i, ts[i].Reference, s.EventID, s.TransactionRef, s)
			}
		}
		queued, err := db.Reader().EventFanout.Query().Order(ent.Asc(eventfanout.FieldID)).IDs(sys)
		if err != nil || len(queued) != len(stored) {
			t.Fatalf("queued %v (%v), want every event", queued, err)
		}
		for i, s := range stored {
			if queued[i] != s.ID {
				t.Fatalf("queued %v, want every event's id", queued)
			}
		}

		err = db.Within(tenant.System(ctx), nil, func(_ context.Context, tx *ent.Tx) error {
			return ob.EmitAll(context.Background(), tx, events.DepositSuccess, ts[:1])
		})
		if !errors.Is(err, tenant.ErrNoTenant) {
			t.Fatalf("EmitAll with no tenant: %v, want tenant.ErrNoTenant", err)
		}
	})
}
