package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Merchant is an API caller. It is not tenant-scoped: it is the tenant.
type Merchant struct{ ent.Schema }

func (Merchant) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

func (Merchant) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("name").NotEmpty(),
		field.String("email").NotEmpty(),
	}
}

// APIKey stores only the SHA-256 of a key; the plain key is shown once.
type APIKey struct{ ent.Schema }

func (APIKey) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

func (APIKey) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("merchant_id").Immutable().NotEmpty(),
		field.String("mode").Immutable(),
		field.String("kind").Immutable().Comment("secret or public"),
		field.String("hash").Immutable().Unique().Sensitive(),
		field.String("prefix").Immutable().Comment("first characters, for logs and dashboards"),
		field.Time("revoked_at").Optional().Nillable(),
		field.Time("expires_at").Optional().Nillable().
			Comment("set when the key was rolled with an overlap: it stops working then"),
		field.Time("last_used_at").Optional().Nillable().
			Comment("written at most once a minute per key by merchants.Usage"),
	}
}

func (APIKey) Indexes() []ent.Index {
	return []ent.Index{index.Fields("merchant_id", "mode", "kind")}
}
