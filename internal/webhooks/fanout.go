package webhooks

import (
	"context"

	"entgo.io/ent/dialect/sql"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/webhookendpoint"
	"merchantpay/internal/tenant"
)

// fanOut turns new events into deliveries (and whatever FanOut adds), in
// batches, each in one transaction with the events' fanned_out flag;
// committed runs after each batch that had events.
func (d *Dispatcher) fanOut(ctx context.Context, committed func()) error {
	for {
		n := 0
		err := d.db.Tx(ctx, func(ctx context.Context) error {
			c := d.db.Client(ctx)
			q := c.Event.Query().Where(event.FannedOut(false)).Order(ent.Asc(event.FieldID)).Limit(fanOutBatch)
			if d.db.IsPostgres() {
				// Instances share the backlog instead of queueing on one row.
				q = q.ForUpdate(sql.WithLockAction(sql.SkipLocked))
			}
			// Not the payloads: deliveries do not need them (a claim reads
			// them for the attempt), and FanOut reads one when it needs it.
			evs, err := q.Select(fanOutColumns...).All(ctx)
			if err != nil {
				return err
			}
			n = len(evs)
			if n == 0 {
				return nil
			}
			if d.db.IsPostgres() {
				// The rows are locked: one update marks the batch.
				ids := make([]int64, len(evs))
				for i, ev := range evs {
					ids[i] = ev.ID
				}
				if _, err := c.Event.Update().Where(event.IDIn(ids...)).SetFannedOut(true).Save(ctx); err != nil {
					return err
				}
			} else {
				// Conditional, so an event is fanned out once even where
				// rows cannot be locked (SQLite shared by two processes).
				kept := evs[:0]
				for _, ev := range evs {
					k, err := c.Event.Update().Where(event.ID(ev.ID), event.FannedOut(false)).SetFannedOut(true).Save(ctx)
					if err != nil {
						return err
					}
					if k == 1 {
						kept = append(kept, ev)
					}
				}
				evs = kept
			}
			endpoints := map[tenant.Tenant][]*ent.WebhookEndpoint{}
			now := d.clock.Now()
			var pairs []newDeliveryPair
			for _, ev := range evs {
				t := tenant.Tenant{MerchantID: ev.MerchantID, Mode: ev.Mode}
				eps, ok := endpoints[t]
				if !ok {
					eps, err = c.WebhookEndpoint.Query().Where(
						webhookendpoint.MerchantID(t.MerchantID), webhookendpoint.Mode(t.Mode),
						webhookendpoint.Enabled(true), webhookendpoint.DeletedAtIsNil()).All(ctx)
					if err != nil {
						return err
					}
					endpoints[t] = eps
				}
				for _, ep := range eps {
					if Matches(ep, ev.Type) {
						pairs = append(pairs, newDeliveryPair{ev, ep})
					}
				}
			}
			if d.cfg.FanOut != nil && len(evs) > 0 {
				if err := d.cfg.FanOut(ctx, evs); err != nil {
					return err
				}
			}
			// One insert for the batch's deliveries, ids not read back.
			return insertDeliveries(ctx, d.db, d.db.Client(ctx), pairs, now)
		})
		if err == nil && n > 0 {
			committed()
		}
		if err != nil || n < fanOutBatch {
			return err
		}
	}
}

// fanOutColumns are the event columns fan-out reads: all but the payload.
var fanOutColumns = []string{
	event.FieldID, event.FieldMerchantID, event.FieldMode, event.FieldEventID, event.FieldType,
	event.FieldTransactionRef, event.FieldCreatedAt, event.FieldFannedOut, event.FieldTraceParent,
}
