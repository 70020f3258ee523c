package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// IdempotencyRecord is the stored first answer to a request with an
// Idempotency-Key, committed in the same transaction as the effect.
type IdempotencyRecord struct{ ent.Schema }

func (IdempotencyRecord) Fields() []ent.Field {
	return []ent.Field{
		field.String("merchant_id").Immutable(),
		field.String("mode").Immutable(),
		field.String("key").Immutable(),
		field.String("request_hash").Immutable(),
		field.Int("status_code").Immutable(),
		field.Bytes("body").Immutable(),
		field.String("content_type").Immutable(),
		field.Time("created_at").Immutable(),
		field.Time("expires_at").Immutable(),
	}
}

func (IdempotencyRecord) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("merchant_id", "mode", "key").Unique(),
		index.Fields("expires_at"),
	}
}

// Event is the transactional outbox: written in the same database
// transaction as the state change it reports. Its integer id orders events.
type Event struct{ ent.Schema }

func (Event) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("event_id").Immutable().Unique().Comment("evt_<uuid>"),
		field.String("type").Immutable(),
		field.String("transaction_ref").Optional().Immutable(),
		field.Bytes("payload").Immutable().Comment("the webhook body's data: the Transaction as GET showed it then"),
		field.Time("created_at").Immutable(),
		// Retired: fan-out progress is the event_fanouts queue (EventFanout).
		// Kept one release, written true at insert and never updated, so
		// that a rollback to the release before finds these events fanned
		// out (its down migration marks those still queued false); the
		// next release drops it.
		field.Bool("fanned_out").Default(false).Immutable().Comment("retired: see event_fanouts"),
		// The W3C traceparent of the request that made the event, when
		// traced: the webhook delivery's span links to it.
		field.String("trace_parent").Optional().Nillable().Immutable(),
	}
}

func (Event) Indexes() []ent.Index {
	return []ent.Index{
		// Subscriptions replay a tenant's events in id order.
		index.Fields("merchant_id", "mode", "id"),
		// A transaction's events (the dashboard's detail view).
		index.Fields("transaction_ref"),
	}
}

// ExportToken is a one-time credential for one CSV export: only its SHA-256
// is kept; using it marks it used in the same statement that checks it, so
// it works once across every instance.
type ExportToken struct{ ent.Schema }

func (ExportToken) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (ExportToken) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().Comment("the token's SHA-256, hex"),
		field.Bytes("filter").Immutable().Comment("the export's transaction filter, JSON"),
		field.Time("created_at").Immutable(),
		field.Time("expires_at").Immutable(),
		field.Time("used_at").Optional().Nillable(),
	}
}

func (ExportToken) Indexes() []ent.Index {
	return []ent.Index{index.Fields("expires_at")}
}
