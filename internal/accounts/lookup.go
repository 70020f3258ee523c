package accounts

import (
	"context"

	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqlgraph"

	"merchantpay/ent"
	"merchantpay/ent/fiataccount"
	"merchantpay/internal/apperr"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
)

// This file holds the look-ups of issued accounts: a wallet's accounts, the
// first account of each of several wallets, one account by
// account_reference, and one by account_number across every tenant, as
// incoming transfers need. Each reads in tx, the caller's transaction, or
// outside any when tx is nil.

// ForWallet lists a wallet's accounts, oldest first.
func (s *Service) ForWallet(ctx context.Context, tx *ent.Tx, w *ent.Wallet) ([]*ent.FiatAccount, error) {
	rows, err := s.db.ClientOf(tx).FiatAccount.Query().Where(fiataccount.WalletID(w.ID)).
		Order(ent.Asc(fiataccount.FieldCreatedAt), ent.Asc(fiataccount.FieldID)).All(ctx)
	return rows, store.Classify(err)
}

// FirstOfWallets finds the first account (oldest by creation, as ForWallet
// orders them) of each wallet of ws, in one query however many wallets: a
// page of wallets shows each one's first account. The map is keyed by
// wallet id and has no entry for a wallet without accounts.
func (s *Service) FirstOfWallets(ctx context.Context, tx *ent.Tx, ws []*ent.Wallet) (map[string]*ent.FiatAccount, error) {
	first := make(map[string]*ent.FiatAccount, len(ws))
	if len(ws) == 0 {
		return first, nil
	}
	ids := make([]string, len(ws))
	for i, w := range ws {
		ids[i] = w.ID
	}
	q := s.db.ClientOf(tx).FiatAccount.Query().Where(fiataccount.WalletIDIn(ids...))
	// Numbers each wallet's accounts in ForWallet's order and keeps the
	// first: one pass over the wallets' accounts, where a "no older
	// sibling" condition would compare every pair of them.
	q.Modify(sqlgraph.LimitNeighbors(fiataccount.FieldWalletID, 1, entsql.ExprFunc(func(b *entsql.Builder) {
		b.IdentComma(fiataccount.FieldCreatedAt, fiataccount.FieldID)
	})))
	rows, err := q.All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	for _, a := range rows {
		first[*a.WalletID] = a
	}
	return first, nil
}

// ForWalletReference lists the accounts of the wallet with reference ref,
// oldest first.
func (s *Service) ForWalletReference(ctx context.Context, tx *ent.Tx, ref string) ([]*ent.FiatAccount, error) {
	rows, err := s.db.ClientOf(tx).FiatAccount.Query().Where(fiataccount.WalletReference(ref)).
		Order(ent.Asc(fiataccount.FieldCreatedAt), ent.Asc(fiataccount.FieldID)).All(ctx)
	return rows, store.Classify(err)
}

// Get finds an account of the context's tenant by account_reference.
func (s *Service) Get(ctx context.Context, tx *ent.Tx, ref string) (*ent.FiatAccount, error) {
	a, err := s.db.ClientOf(tx).FiatAccount.Query().Where(fiataccount.Reference(ref)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no account with account_reference %q", ref)
	}
	return a, store.Classify(err)
}

// ByNumber finds an account by account_number across every merchant and
// mode (account numbers are unique system-wide, as at a bank): incoming
// transfers name only the number. The account's MerchantID and Mode tell
// whose it is; act for that tenant (tenant.With) to book the deposit. It
// runs in tx, the caller's transaction, if any. Unknown: NOT_FOUND.
func (s *Service) ByNumber(ctx context.Context, tx *ent.Tx, accountNumber string) (*ent.FiatAccount, error) {
	sys := systemScope(ctx)
	a, err := s.db.ClientOf(tx).FiatAccount.Query().Where(fiataccount.AccountNumber(accountNumber)).Only(sys)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "no account with account_number %q", accountNumber)
	}
	return a, store.Classify(err)
}

// systemScope returns a context that sees every tenant's rows while keeping
// ctx's cancellation. tenant.System(ctx) alone would not do: a tenant
// already in ctx takes precedence over it.
func systemScope(ctx context.Context) context.Context {
	return valuesFrom{Context: ctx, values: tenant.System(context.Background())}
}

// valuesFrom is ctx for deadlines and cancellation, values for Value.
type valuesFrom struct {
	context.Context
	values context.Context
}

func (v valuesFrom) Value(key any) any { return v.values.Value(key) }
