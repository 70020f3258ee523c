package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"merchantpay/ent/schematype"
)

// Wallet stands for one customer of a merchant.
type Wallet struct{ ent.Schema }

func (Wallet) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

func (Wallet) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("reference").Immutable().NotEmpty(),
		field.String("firstname"),
		field.String("lastname"),
		field.String("email"),
		field.String("phone"),
		field.JSON("documents", []schematype.Document{}),
	}
}

func (Wallet) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("merchant_id", "mode", "reference").Unique(),
		// Keyset pagination, newest first.
		index.Fields("merchant_id", "mode", "created_at", "id"),
	}
}
