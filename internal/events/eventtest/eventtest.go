// Package eventtest makes outbox events for tests of what consumes them
// (webhooks, e-mail, subscriptions): a transaction row and its event,
// written in one database transaction as the real operations do.
package eventtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/internal/events"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// Emit stores a deposit of 1500.50 NGN for tn and an event of type typ
// about it, and returns both, the event as stored.
func Emit(t testing.TB, db *store.DB, ob *events.Outbox, tn tenant.Tenant, typ string) (*ent.Event, *ent.Transaction) {
	t.Helper()
	var ev *ent.Event
	var row *ent.Transaction
	ctx := tenant.With(context.Background(), tn)
	err := db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		row, err = Transaction(ctx, tx)
		if err != nil {
			return err
		}
		if err := ob.Emit(ctx, tx, typ, row); err != nil {
			return err
		}
		evs, err := ob.ForTransaction(ctx, tx, row.Reference)
		if err != nil {
			return err
		}
		if len(evs) != 1 {
			return fmt.Errorf("eventtest: %d events about the new %s, want 1", len(evs), row.Reference)
		}
		ev = evs[0]
		return nil
	})
	if err != nil {
		t.Fatalf("emit %s: %v", typ, err)
	}
	return ev, row
}

// Transaction inserts a deposit row, shaped as the service writes one,
// in tx.
func Transaction(ctx context.Context, tx *ent.Tx) (*ent.Transaction, error) {
	return transactionWith(ctx, tx.Client())
}

func transactionWith(ctx context.Context, c *ent.Client) (*ent.Transaction, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	id := uuid.NewString()
	return c.Transaction.Create().SetID(id).SetReference("DEP-" + id).
		SetType("DEPOSIT").SetPurpose("DEPOSIT").SetStatus("success").
		SetFromAmount(150050).SetFromCurrency("NGN").SetAmount(150050).SetCurrency("NGN").
		SetAmountCharged(150050).SetAmountSettled(150050).SetPaymentSlug("instant-bank-deposit").
		SetNarration("Invoice <42> & co").SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
}
