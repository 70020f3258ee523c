package webhooks

import (
	"context"
	"database/sql"
	"strings"

	"merchantpay/ent"
	"merchantpay/ent/event"
	"merchantpay/ent/eventfanout"
	"merchantpay/ent/webhookendpoint"
	"merchantpay/internal/tenant"
)

// fanOut turns new events into deliveries (and whatever FanOut adds), in
// batches, each in one transaction that takes the events off the fan-out
// queue (event_fanouts); committed runs after each batch that had events.
// The event rows themselves are only read.
func (d *Dispatcher) fanOut(ctx context.Context, committed func()) error {
	for {
		n := 0
		err := d.db.Within(ctx, nil, func(ctx context.Context, tx *ent.Tx) error {
			taken, evs, err := d.take(ctx, tx)
			n = taken
			if err != nil || len(evs) == 0 {
				return err
			}
			c := tx.Client()
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
			if err := d.fanOutHook(ctx, tx, evs); err != nil {
				return err
			}
			// One insert for the batch's deliveries, ids not read back.
			return insertDeliveries(ctx, d.db, c, pairs, now)
		})
		if err == nil && n > 0 {
			committed()
		}
		if err != nil || n < fanOutBatch {
			return err
		}
	}
}

// fanOutHook runs the configured hook on a batch of events in tx.
func (d *Dispatcher) fanOutHook(ctx context.Context, tx *ent.Tx, evs []*ent.Event) error {
	if d.cfg.FanOut == nil {
		return nil
	}
	return d.cfg.FanOut(ctx, tx, evs)
}

// take takes up to fanOutBatch events off the fan-out queue in tx, in id
// order, and reads them (all but the payload: deliveries do not need it,
// a claim reads it for the attempt, and FanOut reads one when it needs
// it). taken counts the queue rows looked at, evs the events this
// transaction took: on PostgreSQL one statement locks the first rows no
// other instance holds (SKIP LOCKED, so instances share a backlog instead
// of queueing on one row), deletes them and joins their events; on SQLite
// the transaction holds the database's write lock from its BEGIN (the
// writer begins IMMEDIATE), so no other process can take the rows it reads
// before it deletes them, and one delete takes them all. A rollback puts
// the rows back.
func (d *Dispatcher) take(ctx context.Context, tx *ent.Tx) (taken int, evs []*ent.Event, err error) {
	if d.db.IsPostgres() {
		rows, err := tx.QueryContext(ctx, takePostgres, fanOutBatch)
		if err != nil {
			return 0, nil, err
		}
		defer rows.Close()
		for rows.Next() {
			var ev ent.Event
			var ref, parent sql.NullString
			if err := rows.Scan(&ev.ID, &ev.MerchantID, &ev.Mode, &ev.EventID, &ev.Type, &ref,
				&ev.CreatedAt, &parent); err != nil {
				return 0, nil, err
			}
			ev.TransactionRef = ref.String
			ev.TraceParent = nullable(parent.String, parent.Valid)
			evs = append(evs, &ev)
		}
		// An event whose row is gone still took its queue row.
		return len(evs), evs, rows.Err()
	}
	c := tx.Client()
	ids, err := c.EventFanout.Query().Order(ent.Asc(eventfanout.FieldID)).Limit(fanOutBatch).IDs(ctx)
	if err != nil || len(ids) == 0 {
		return 0, nil, err
	}
	if _, err := c.EventFanout.Delete().Where(eventfanout.IDIn(ids...)).Exec(ctx); err != nil {
		return 0, nil, err
	}
	evs, err = c.Event.Query().Where(event.IDIn(ids...)).Order(ent.Asc(event.FieldID)).
		Select(fanOutColumns...).All(ctx)
	return len(ids), evs, err
}

// takePostgres is take's statement on PostgreSQL ($1: the batch): the
// columns of fanOutColumns, in that order, of the events it took. The rows
// to take are picked once, as an array: as "IN (SELECT ...)" the planner
// may run the locking pick again for every queue row it looks at, dead
// ones included (a busy queue holds thousands until autovacuum comes).
var takePostgres = `WITH q AS (DELETE FROM ` + eventfanout.Table + ` WHERE ` + eventfanout.FieldID + ` = ANY(ARRAY(
	SELECT ` + eventfanout.FieldID + ` FROM ` + eventfanout.Table + ` ORDER BY ` + eventfanout.FieldID + ` LIMIT $1 FOR UPDATE SKIP LOCKED))
	RETURNING ` + eventfanout.FieldID + `)
SELECT e.` + strings.Join(fanOutColumns, ", e.") + `
FROM q JOIN ` + event.Table + ` AS e ON e.id = q.` + eventfanout.FieldID + ` ORDER BY e.id`

// fanOutColumns are the event columns fan-out reads: all but the payload
// and the retired fanned_out (the queue holds fan-out's progress).
var fanOutColumns = []string{
	event.FieldID, event.FieldMerchantID, event.FieldMode, event.FieldEventID, event.FieldType,
	event.FieldTransactionRef, event.FieldCreatedAt, event.FieldTraceParent,
}
