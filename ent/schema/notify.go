package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// WebhookEndpoint is where a merchant (in one mode) receives signed events.
// Deleting one only marks it, so its deliveries stay readable.
type WebhookEndpoint struct{ ent.Schema }

func (WebhookEndpoint) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "webhook_endpoints"}}
}

func (WebhookEndpoint) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (WebhookEndpoint) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().Comment("we_<uuid>"),
		field.Text("url").Immutable(),
		field.Strings("events").Optional().Comment("event filter; empty means every event"),
		field.String("secret").Sensitive().Comment("whsec_<base64>; kept to sign, shown only on create and roll"),
		field.Bool("enabled").Default(true),
		field.String("disabled_reason").Optional().Nillable(),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
		field.Time("deleted_at").Optional().Nillable(),
	}
}

func (WebhookEndpoint) Indexes() []ent.Index {
	return []ent.Index{index.Fields("merchant_id", "mode", "created_at", "id")}
}

// WebhookDelivery is one event to one endpoint (or a test "ping", which has
// no event row: event_type ping, event_seq 0): a small state machine
// (pending → succeeded | failed; redelivery makes it pending again) claimed
// by one dispatcher at a time through its lease.
type WebhookDelivery struct{ ent.Schema }

func (WebhookDelivery) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "webhook_deliveries"}}
}

func (WebhookDelivery) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().Comment("dlv_<uuid>"),
		field.Int64("event_seq").Immutable().Comment("the Event row's id"),
		field.String("event_id").Immutable().Comment("evt_<uuid>: the webhook-id header"),
		field.String("event_type").Immutable(),
		field.String("endpoint_id").Immutable(),
		field.Text("url").Immutable(),
		field.String("status").Comment("pending, succeeded or failed"),
		field.Int("attempts").Default(0).Comment("attempts made, all runs"),
		field.Int("run_attempts").Default(0).Comment("attempts made in this run; a redelivery starts a new run"),
		field.Int("generation").Default(0).Comment("bumped by a redelivery so an attempt in flight does not overwrite it"),
		field.Time("next_attempt_at").Optional().Nillable(),
		field.String("lease_owner").Optional().Nillable(),
		field.Time("lease_until").Optional().Nillable(),
		field.Int("last_status_code").Optional().Nillable(),
		field.Text("last_error").Optional().Nillable(),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
		field.Time("completed_at").Optional().Nillable(),
		// The attempt a claim leased the delivery for, until its outcome is
		// recorded: a claim that finds it still set (its instance died
		// mid-attempt) records that attempt as interrupted first.
		field.Int("inflight_attempt").Optional().Nillable().Comment("number of the attempt claimed and not yet recorded"),
		field.Time("inflight_started_at").Optional().Nillable().Comment("when that attempt was claimed"),
	}
}

func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("event_id", "endpoint_id").Unique(),
		index.Fields("status", "next_attempt_at"),
		index.Fields("endpoint_id", "status"),
		// A tenant's deliveries newest first (the dashboard's list).
		index.Fields("merchant_id", "mode", "created_at", "id"),
	}
}

// WebhookAttempt records one HTTP attempt of a delivery.
type WebhookAttempt struct{ ent.Schema }

func (WebhookAttempt) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "webhook_attempts"}}
}

func (WebhookAttempt) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (WebhookAttempt) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("delivery_id").Immutable(),
		field.Int("number").Immutable().Comment("1 for the first attempt of the delivery"),
		field.Time("started_at").Immutable(),
		field.Int64("latency_ms").Immutable(),
		field.Int("status_code").Optional().Nillable().Immutable().Comment("absent when no answer came"),
		field.Text("error").Optional().Nillable().Immutable(),
		field.Text("response_body").Optional().Immutable().Comment("the first KiB of the answer"),
		field.Bool("success").Immutable(),
	}
}

func (WebhookAttempt) Indexes() []ent.Index {
	return []ent.Index{index.Fields("delivery_id", "number"), tenantIndex()}
}

// EmailNotification is the e-mail about one event to the merchant's address.
// It is kept whether or not SMTP is configured, so nothing is dropped.
type EmailNotification struct{ ent.Schema }

func (EmailNotification) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "email_notifications"}}
}

func (EmailNotification) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}} }

func (EmailNotification) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().Comment("eml_<uuid>"),
		field.String("event_id").Immutable().Unique(),
		field.String("event_type").Immutable(),
		field.String("to_address").Immutable(),
		field.String("subject").Immutable(),
		field.Text("body").Immutable(),
		field.String("status").Comment("pending, sent, kept (no SMTP configured) or failed"),
		field.Int("attempts").Default(0),
		field.Time("next_attempt_at").Optional().Nillable(),
		field.String("lease_owner").Optional().Nillable(),
		field.Time("lease_until").Optional().Nillable(),
		field.Text("last_error").Optional().Nillable(),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
		field.Time("sent_at").Optional().Nillable(),
		// The traceparent of the request that made its event: the send's
		// span links to it.
		field.String("trace_parent").Optional().Nillable().Immutable(),
	}
}

func (EmailNotification) Indexes() []ent.Index {
	return []ent.Index{index.Fields("status", "next_attempt_at"), tenantIndex()}
}
