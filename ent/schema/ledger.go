package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// LedgerAccount is one account of the double-entry ledger: a merchant's main
// balance in one mode and currency, or one of the service's own accounts
// (rails clearing, fees, FX). Only the ledger package reads and writes it, and
// always names the owner explicitly, so it is not tenant-intercepted.
type LedgerAccount struct{ ent.Schema }

func (LedgerAccount) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty(),
		field.String("owner").Immutable().Comment("merchant id, or \"system\""),
		field.String("mode").Immutable(),
		field.String("currency").Immutable(),
		field.String("kind").Immutable().Comment("main, or a system kind: rails_clearing, payouts_in_flight, fees, fx, sandbox_funding"),
		field.Bool("tracks_balance").Immutable().Default(true).
			Comment("false for the service's own accounts, whose balance is the sum of their entries (no hot row)"),
		field.Int64("available").Default(0),
		field.Int64("pending").Default(0),
		field.Time("created_at").Immutable(),
		field.Time("updated_at"),
	}
}

// Annotations make a negative balance impossible even for a statement that
// bypassed the ledger's conditional updates.
func (LedgerAccount) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Checks(map[string]string{
		"ledger_accounts_nonnegative": "available >= 0 AND pending >= 0",
	})}
}

// Indexes: a merchant's balances are read by (owner, mode, kind). The id
// is derived from (owner, mode, currency, kind), so the primary key keeps
// them unique; a unique index of its own on them made concurrent first
// credits of one account fail: an upsert's ON CONFLICT handles one index.
func (LedgerAccount) Indexes() []ent.Index {
	return []ent.Index{index.Fields("owner", "mode", "kind")}
}

// LedgerEntry is one leg of a posting. The entries of a posting sum to zero
// per currency. Entries are never updated or deleted; corrections are
// reversal postings.
type LedgerEntry struct{ ent.Schema }

func (LedgerEntry) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("posting_id").Immutable(),
		field.Int("seq").Immutable().Comment("position of the entry in its posting; (posting_id, seq) is unique, so a posting id can be used once"),
		field.String("account_id").Immutable(),
		field.String("currency").Immutable(),
		field.String("bucket").Immutable().Comment("available or pending"),
		field.Int64("amount").Immutable().Comment("signed minor units; positive raises the account's balance"),
		field.String("transaction_ref").Optional().Immutable(),
		field.String("memo").Optional().Immutable(),
		field.Time("created_at").Immutable(),
	}
}

func (LedgerEntry) Indexes() []ent.Index {
	// (account_id, id): an account's entries, and its history newest first.
	return []ent.Index{index.Fields("account_id", "id"), index.Fields("posting_id", "seq").Unique()}
}

// BalanceSlot holds part of a merchant's available balance, so that
// concurrent payouts of one balance debit different rows instead of
// queueing for one (see the ledger package). An account's available
// balance is its own column plus the sum of its slots.
type BalanceSlot struct{ ent.Schema }

func (BalanceSlot) Fields() []ent.Field {
	return []ent.Field{
		field.String("id").Immutable().NotEmpty().Comment("<account id>#<n>"),
		field.String("account_id").Immutable(),
		field.Int64("available").Default(0),
		field.Time("updated_at"),
	}
}

func (BalanceSlot) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Checks(map[string]string{
		"balance_slots_nonnegative": "available >= 0",
	})}
}

func (BalanceSlot) Indexes() []ent.Index {
	return []ent.Index{index.Fields("account_id")}
}
