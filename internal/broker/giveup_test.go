package broker_test

import (
	"context"
	"database/sql"
	"log/slog"
	"os"
	"testing"
	"time"

	"merchantpay/internal/broker"
	"merchantpay/internal/testdb"
)

// A transaction holding a transaction id open in another database of the
// same server (another app, another test) does not keep a rolled-back id
// from being given up within a few polls.
func TestRolledBackIDIgnoresOtherDatabases(t *testing.T) {
	url := testdb.MigratedPostgresURL(t)
	other, err := sql.Open("postgres", os.Getenv("TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	otx, err := other.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = otx.Rollback() }()
	var xid string
	if err := otx.QueryRow(`SELECT pg_current_xact_id()::text`).Scan(&xid); err != nil {
		t.Fatal(err)
	}
	e := setup(t, url, broker.Config{PollInterval: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := e.subscribe(ctx, alice, nil, "")
	tx, gone := e.openEvent(alice, "deposit.pending")
	later := e.emit(alice, "deposit.success")
	if later.ID <= gone.ID {
		t.Fatalf("ids %d, %d: want the open transaction's to be smaller", gone.ID, later.ID)
	}
	quiet(t, live, 200*time.Millisecond)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-live:
		if ev == nil || ev.EventID != later.EventID {
			t.Fatalf("got %v, want %s", ev, later.EventID)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the rolled-back id still holds the stream while another database has a transaction open")
	}
}

// An id given up on (drawn with no transaction in flight to tell) that is
// committed afterwards is still delivered, late and once.
func TestGivenUpIDDeliveredLate(t *testing.T) {
	e := setup(t, testdb.MigratedPostgresURL(t), broker.Config{PollInterval: 50 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := e.subscribe(ctx, alice, nil, "")
	// Draw an id outside any transaction: nothing in flight holds it.
	var drawn int64
	if err := e.db.SQL().QueryRow(`SELECT nextval(pg_get_serial_sequence('events', 'id'))`).Scan(&drawn); err != nil {
		t.Fatal(err)
	}
	later := e.emit(alice, "deposit.success")
	expect(t, live, later) // drawn was given up
	// Now the drawn id commits, a copy of later's event under a new event id.
	if _, err := e.db.SQL().Exec(`INSERT INTO events (id, merchant_id, mode, event_id, type, transaction_ref, payload, created_at, fanned_out)
		SELECT $1, merchant_id, mode, event_id || '_late', type, transaction_ref, payload, created_at, fanned_out FROM events WHERE id = $2`,
		drawn, later.ID); err != nil {
		t.Fatal(err)
	}
	e.b.Wake()
	got := next(t, live)
	if got.ID != drawn {
		t.Fatalf("got seq %d, want the late one %d", got.ID, drawn)
	}
	sentinel := e.emit(alice, "deposit.failed")
	expect(t, live, sentinel)
	quiet(t, live, 300*time.Millisecond)
}

// A gap given up at GapTimeout (its transaction still open) releases the
// events after it and is said at WARN: if it commits later, no live
// subscriber gets it.
func TestGapTimeoutSaidAtWarn(t *testing.T) {
	var log levels
	e := setup(t, testdb.MigratedPostgresURL(t), broker.Config{
		PollInterval: 50 * time.Millisecond, GapTimeout: 300 * time.Millisecond, Log: slog.New(&log)})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := e.subscribe(ctx, alice, nil, "")
	_, open := e.openEvent(alice, "deposit.pending")
	later := e.emit(alice, "deposit.success")
	if later.ID <= open.ID {
		t.Fatalf("ids %d, %d: want the open transaction's to be smaller", open.ID, later.ID)
	}
	if n := log.count(slog.LevelWarn); n != 0 {
		t.Fatalf("%d WARN lines before the gap timed out", n)
	}
	expect(t, live, later)
	if n := log.count(slog.LevelWarn); n != 1 {
		t.Fatalf("%d WARN lines once the gap timed out, want 1", n)
	}
}
