package events_test

import (
	"context"
	"errors"
	"slices"
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
		var want []int64
		err := db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			var ts []*ent.Transaction
			for range 3 {
				row, err := eventtest.Transaction(ctx, tx)
				if err != nil {
					return err
				}
				ts = append(ts, row)
			}
			one, err := ob.Emit(ctx, tx, events.DepositSuccess, ts[0])
			if err != nil {
				return err
			}
			two, err := ob.EmitAll(ctx, tx, events.DepositPending, ts[1:])
			if err != nil {
				return err
			}
			want = append(want, one.ID, two[0].ID, two[1].ID)
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
		rows, err := db.Reader().Event.Query().Where(event.Type(events.WithdrawalPending)).IDs(sys)
		if err != nil || len(rows) != 2 {
			t.Fatalf("events of Rows: %v, %v", rows, err)
		}
		want = append(want, rows...)
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
			if _, err := ob.Emit(ctx, tx, events.DepositSuccess, row); err != nil {
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

// EmitAll hands back its events as they were stored, in the order of
// their transactions, and queues each for fan-out; a context that acts for
// no tenant and is not the system is refused, as the tenant rule refuses
// any write.
func TestEmitAllReturnsTheStoredEvents(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		ob := events.New(db, clock.NewFake(time.Date(2026, 11, 27, 4, 5, 6, 7e6, time.UTC)))
		tn := tenant.Tenant{MerchantID: "m_1", Mode: tenant.Test}
		ctx := tenant.With(context.Background(), tn)
		var ts []*ent.Transaction
		var got []*ent.Event
		err := db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			for range 3 {
				row, err := eventtest.Transaction(ctx, tx)
				if err != nil {
					return err
				}
				ts = append(ts, row)
			}
			var err error
			got, err = ob.EmitAll(ctx, tx, events.DepositSuccess, ts)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		sys := tenant.System(ctx)
		stored, err := db.Reader().Event.Query().Order(ent.Asc(event.FieldID)).All(sys)
		if err != nil || len(stored) != len(ts) || len(got) != len(ts) {
			t.Fatalf("stored %d events (%v), returned %d, want %d", len(stored), err, len(got), len(ts))
		}
		byID := map[int64]*ent.Event{}
		for _, s := range stored {
			byID[s.ID] = s
		}
		for i, ev := range got {
			s := byID[ev.ID]
			if s == nil {
				t.Fatalf("event %d: id %d is no stored event's", i, ev.ID)
			}
			if ev.TransactionRef != ts[i].Reference || s.TransactionRef != ev.TransactionRef ||
				s.EventID != ev.EventID || s.Type != ev.Type || s.MerchantID != ev.MerchantID || s.Mode != ev.Mode ||
				!slices.Equal(s.Payload, ev.Payload) || !s.CreatedAt.Equal(ev.CreatedAt) || s.FannedOut != ev.FannedOut ||
				(s.TraceParent == nil) != (ev.TraceParent == nil) {
				t.Fatalf("event %d (of transaction %s): returned %s about %s, stored %s about %s",
					i, ts[i].Reference, ev.EventID, ev.TransactionRef, s.EventID, s.TransactionRef)
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
			_, err := ob.EmitAll(context.Background(), tx, events.DepositSuccess, ts[:1])
			return err
		})
		if !errors.Is(err, tenant.ErrNoTenant) {
			t.Fatalf("EmitAll with no tenant: %v, want tenant.ErrNoTenant", err)
		}
	})
}
