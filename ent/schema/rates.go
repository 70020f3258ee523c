package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"

	"merchantpay/ent/schematype"
)

// Pair is an operator-configured ASSET/FIAT pair shared by every instance.
type Pair struct{ ent.Schema }

func (Pair) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().Comment("ASSET/FIAT, e.g. USDT/NGN"),
		field.String("asset").Immutable(),
		field.String("fiat").Immutable(),
		field.String("mid").SchemaType(numeric).GoType(decimal.Decimal{}),
		field.String("spread").SchemaType(numeric).GoType(decimal.Decimal{}),
		field.JSON("fees", map[string]schematype.FeeRule{}).Comment("by transaction type: swap, deposit, withdrawal"),
		field.Bool("default_enabled").Default(true),
		field.String("config_hash").Default("").
			Comment("hash of the config file entry last applied; a changed entry is applied again at start-up"),
		field.Time("updated_at"),
	}
}

// MerchantPair overrides whether a pair is enabled for one merchant.
type MerchantPair struct{ ent.Schema }

func (MerchantPair) Fields() []ent.Field {
	return []ent.Field{
		field.String("merchant_id").Immutable(),
		field.String("pair_id").Immutable(),
		field.Bool("enabled"),
		field.Time("updated_at"),
	}
}

func (MerchantPair) Indexes() []ent.Index {
	return []ent.Index{index.Fields("merchant_id", "pair_id").Unique()}
}

// Quote is a created rate, consumed at most once.
type Quote struct{ ent.Schema }

func (Quote) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

func (Quote) Indexes() []ent.Index { return []ent.Index{tenantIndex()} }

func (Quote) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().Comment("the quote reference"),
		field.String("pair_id"),
		field.String("market").Comment("BUY or SELL"),
		field.String("from_currency"),
		field.String("to_currency"),
		field.Int64("from_amount"),
		field.Int64("to_amount"),
		field.Int64("fee"),
		field.String("fixed_side").Comment("from or to: the amount the merchant gave"),
		field.String("rate").SchemaType(numeric).GoType(decimal.Decimal{}),
		field.String("transaction_type"),
		field.String("deposit_method").Optional().Nillable(),
		field.String("withdrawal_method").Optional().Nillable(),
		field.Time("expires_at"),
		field.Bool("used").Default(false),
		field.String("used_by").Optional().Nillable(),
	}
}
