package schema

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"entgo.io/ent/schema/mixin"

	"merchantpay/ent/intercept"
	"merchantpay/internal/tenant"
)

// nowMillis is the fallback for time columns; operations set times from their
// injected clock. Times are UTC with millisecond precision on both databases.
func nowMillis() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// TimeMixin adds created_at and updated_at.
type TimeMixin struct{ mixin.Schema }

func (TimeMixin) Fields() []ent.Field {
	return []ent.Field{
		field.Time("created_at").Default(nowMillis).Immutable(),
		field.Time("updated_at").Default(nowMillis),
	}
}

// TenantMixin scopes a table to (merchant, mode). Its interceptor and hook
// refuse any query or mutation whose context carries neither a tenant nor the
// explicit system marker, so no query can forget the scope.
type TenantMixin struct{ mixin.Schema }

func (TenantMixin) Fields() []ent.Field {
	return []ent.Field{
		field.String("merchant_id").Immutable().NotEmpty(),
		field.String("mode").Immutable().NotEmpty(),
	}
}

// TenantMixin has no index of its own: each table indexes (merchant_id,
// mode) as the leading columns of the index its tenant's lists and look-ups
// use (tenantIndex where none longer serves), so that no insert or update
// pays for an index another one already covers.

func (TenantMixin) Interceptors() []ent.Interceptor {
	return []ent.Interceptor{
		intercept.TraverseFunc(func(ctx context.Context, q intercept.Query) error {
			t, scoped, err := tenant.Scope(ctx)
			if err != nil {
				return err
			}
			if scoped {
				q.WhereP(sql.FieldEQ("merchant_id", t.MerchantID), sql.FieldEQ("mode", t.Mode))
			}
			return nil
		}),
	}
}

type tenantMutation interface {
	SetOp(ent.Op)
	WhereP(...func(*sql.Selector))
	SetField(string, ent.Value) error
}

func (TenantMixin) Hooks() []ent.Hook {
	return []ent.Hook{
		func(next ent.Mutator) ent.Mutator {
			return ent.MutateFunc(func(ctx context.Context, m ent.Mutation) (ent.Value, error) {
				tm, ok := m.(tenantMutation)
				if !ok {
					return nil, fmt.Errorf("tenant: unexpected mutation %T", m)
				}
				t, scoped, err := tenant.Scope(ctx)
				if err != nil {
					return nil, err
				}
				if !scoped {
					return next.Mutate(ctx, m)
				}
				if m.Op().Is(ent.OpCreate) {
					if err := tm.SetField("merchant_id", t.MerchantID); err != nil {
						return nil, err
					}
					if err := tm.SetField("mode", t.Mode); err != nil {
						return nil, err
					}
				} else {
					tm.WhereP(sql.FieldEQ("merchant_id", t.MerchantID), sql.FieldEQ("mode", t.Mode))
				}
				return next.Mutate(ctx, m)
			})
		},
	}
}

// tenantIndex is (merchant_id, mode), for a tenant's table that has no
// longer index starting with them.
func tenantIndex() ent.Index { return index.Fields("merchant_id", "mode") }
