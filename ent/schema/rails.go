package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// RailsNotice is one fact a live provider's webhook told, recorded in the
// transaction that acted on it: its unique (provider, key) makes a repeated
// delivery change nothing. It belongs to no tenant; an inflow to an account
// we do not know is kept here, with its body, for an operator.
type RailsNotice struct{ ent.Schema }

func (RailsNotice) Fields() []ent.Field {
	return []ent.Field{
		field.String("provider").Immutable(),
		field.String("key").Immutable(),
		field.String("kind").Immutable().Comment("payout, inflow, order or other"),
		field.String("reference").Optional().Immutable().Comment("the provider's reference the notice names"),
		field.String("outcome").Immutable().Comment("what the service did: applied, ignored, unknown_account, unknown_transaction, flagged"),
		field.Text("detail").Optional().Immutable(),
		field.Text("body").Optional().Immutable().Comment("the delivery, kept when an operator must act on it"),
		field.Time("created_at").Immutable(),
	}
}

func (RailsNotice) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "key").Unique(),
		index.Fields("outcome", "created_at"),
	}
}
