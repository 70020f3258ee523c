package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// CryptoPayEnrolment is a merchant's crypto-pay sub-merchant enrolment
// (CONTRACT 7). It is tenant-scoped like every merchant row, but crypto-pay
// is live only, so in practice there is one per merchant, in live mode.
// Enrolling again replaces the details.
type CryptoPayEnrolment struct{ ent.Schema }

func (CryptoPayEnrolment) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Annotation{Table: "crypto_pay_enrolments"}}
}

func (CryptoPayEnrolment) Mixin() []ent.Mixin { return []ent.Mixin{TenantMixin{}, TimeMixin{}} }

func (CryptoPayEnrolment) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().Comment("cpe_<uuid>"),
		field.String("business_name"),
		field.Text("logo_url"),
		field.Text("website"),
		field.Text("success_url"),
		field.Text("failure_url"),
		field.String("status").Comment("PENDING or APPROVED; the sandbox approves at once"),
		field.Time("approved_at").Optional().Nillable(),
	}
}

func (CryptoPayEnrolment) Indexes() []ent.Index {
	// One per merchant and mode; named apart from the mixin's plain index
	// on the same columns.
	return []ent.Index{index.Fields("merchant_id", "mode").Unique().StorageKey("crypto_pay_enrolments_tenant_unique")}
}
