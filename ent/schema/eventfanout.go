package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
)

// EventFanout is an event not yet fanned out: the dispatcher's queue. Its
// row is written with its event (in the same statement or transaction) and
// deleted by the transaction that creates the event's deliveries, so the
// event row itself is only ever inserted. The row is its key alone: taking
// it rewrites no payload and no index of the events table.
type EventFanout struct{ ent.Schema }

func (EventFanout) Fields() []ent.Field {
	return []ent.Field{
		// The event's id (events.id): the queue is taken in event order.
		// Given, never generated.
		field.Int64("id").StorageKey("event_id").Immutable().
			Annotations(entsql.Annotation{Incremental: new(bool)}),
	}
}
