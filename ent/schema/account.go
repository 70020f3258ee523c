package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// FiatAccount is a virtual bank account issued on a wallet (or, with no
// wallet, the merchant's global static_dynamic account).
type FiatAccount struct{ ent.Schema }

func (FiatAccount) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

func (FiatAccount) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("reference").Immutable().NotEmpty(),
		field.String("wallet_id").Optional().Nillable().Immutable(),
		field.String("wallet_reference").Optional().Nillable().Immutable(),
		field.String("account_type").Immutable(),
		field.String("currency").Immutable(),
		field.Int64("amount").Optional().Nillable().Immutable().Comment("minor units; dynamic accounts"),
		field.Time("expires_at").Optional().Nillable().Immutable(),
		field.String("reject_amount_criteria").Optional().Nillable().Immutable(),
		field.String("account_number").Immutable().Unique(),
		field.String("account_name").Immutable(),
		field.String("bank_name").Immutable(),
		field.String("bank_code").Immutable(),
		field.String("status").Default("active").Comment("active or closed"),
		// The live provider that issued the number (empty: the sandbox) and
		// its customer the account belongs to.
		field.String("provider").Optional().Nillable().Immutable(),
		field.String("provider_customer").Optional().Nillable().Immutable(),
	}
}

func (FiatAccount) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("merchant_id", "mode", "reference").Unique(),
		index.Fields("wallet_id"),
	}
}
