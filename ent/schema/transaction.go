package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/shopspring/decimal"
)

var numeric = map[string]string{dialect.Postgres: "numeric", dialect.SQLite: "text"}

// Transaction is a deposit, withdrawal or swap, in the spec's shape. Amounts
// are minor units of their currency.
type Transaction struct{ ent.Schema }

func (Transaction) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

func (Transaction) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("reference").Immutable().Unique().Comment("WTH-, DEP- or SWP-<uuid>"),
		field.String("merchant_reference").Optional().Nillable().Immutable(),
		field.String("merchant_reference_key").Optional().Nillable().Immutable().
			Comment("lower-cased merchant_reference: unique per merchant and mode, without regard to case"),
		field.String("type").Immutable(),
		field.String("purpose").Immutable(),
		field.String("status"),
		field.Int64("from_amount"),
		field.String("from_currency"),
		field.Int64("amount"),
		field.String("currency"),
		field.Int64("amount_charged"),
		field.Int64("amount_settled"),
		field.Int64("to_amount").Optional().Nillable(),
		field.String("to_currency").Optional().Nillable(),
		field.Int64("fee").Default(0),
		field.String("fee_currency").Optional(),
		field.String("trx_rate").Optional().Nillable().SchemaType(numeric).GoType(decimal.Decimal{}),
		field.String("rate_id").Optional().Nillable(),
		field.String("from_party").Default("SELF"),
		field.String("to_party").Default("OTHER"),
		field.String("channel").Default("API"),
		field.String("narration").Default(""),
		field.Text("beneficiary").Optional().Nillable(),
		field.String("fee_bearer").Default("merchant"),
		field.String("destination").Default("main_balance"),
		field.String("payment_slug"),
		field.String("from_merchant").Default(""),
		field.String("to_merchant").Optional().Nillable(),
		field.Time("settled_at").Optional().Nillable(),
		field.String("settlement_time").Optional().Nillable(),
		field.Time("settlement_date").Optional().Nillable(),
		field.String("reject_reason").Optional().Nillable(),
		field.String("trace_id").Optional().Nillable(),
		field.String("payment_proof").Optional().Nillable(),
		field.String("wallet_reference").Optional().Nillable(),
		field.String("account_reference").Optional().Nillable(),
		field.String("account_id").Optional().Nillable(),
		field.String("sender_name").Optional().Nillable(),
		field.String("sender_bank").Optional().Nillable(),
		field.String("prepay_id").Optional().Nillable(),
		field.JSON("links", map[string]any{}).Optional(),
		field.Time("expires_at").Optional().Nillable(),
		// Background work (payout submission, settlement, expiry): claimed by a
		// lease so that several instances never process one job twice.
		field.Time("next_run_at").Optional().Nillable(),
		field.Int("attempts").Default(0),
		field.String("lease_owner").Optional().Nillable(),
		field.Time("lease_until").Optional().Nillable(),
		field.String("rails_reference").Optional().Nillable(),
		// When the payout was handed to the rails: stateless rails (the
		// sandbox) decide its outcome from it, and it survives restarts.
		field.Time("submitted_at").Optional().Nillable(),
		// The W3C traceparent of the request that made the transaction,
		// when traced: the spans of the workers that carry it on (payout,
		// settlement, expiry) link to it.
		field.String("trace_parent").Optional().Nillable().Immutable(),
		// Live mode on a real provider: which one carries the transaction
		// (paystack, flutterwave, binancepay) and the reference it knows the
		// transaction by (derived from ours when we submit, the provider's own
		// for an inflow), so that a provider's webhook finds the transaction.
		field.String("provider").Optional().Nillable(),
		field.String("provider_reference").Optional().Nillable(),
		// Set when a provider's account of the transaction disagrees with ours
		// (an amount off by any minor unit): the transaction is left as it is
		// for an operator, and the workers no longer touch it.
		field.String("rails_flag").Optional().Nillable(),
	}
}

func (Transaction) Indexes() []ent.Index {
	return []ent.Index{
		// The unique indexes on columns that most rows leave NULL (a keyless
		// withdrawal has no merchant reference; only crypto-pay orders have a
		// prepay id, only live transactions a provider reference) hold only
		// the rows that have one: NULLs never conflict, so uniqueness is the
		// same, and an insert or a non-HOT update of every other row writes
		// no entry in them. Look-ups compare with a value, which implies IS
		// NOT NULL, so they still use them; no ON CONFLICT names them.
		index.Fields("merchant_id", "mode", "merchant_reference_key").Unique().
			Annotations(entsql.IndexWhere("merchant_reference_key IS NOT NULL")),
		index.Fields("prepay_id").Unique().Annotations(entsql.IndexWhere("prepay_id IS NOT NULL")),
		index.Fields("provider_reference").Unique().Annotations(entsql.IndexWhere("provider_reference IS NOT NULL")),
		index.Fields("merchant_id", "mode", "created_at", "id"),
		// Workers' claims (jobs.Claim): due rows of one type in next_run_at
		// order. Only rows with work ahead are in it, so a claim of one type
		// reads none of the other types' pending rows and none of the
		// finished ones.
		index.Fields("type", "next_run_at").Annotations(entsql.IndexWhere("next_run_at IS NOT NULL")),
	}
}
