package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/fiataccount"
	"merchantpay/ent/merchant"
	"merchantpay/internal/apperr"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/wallets"
)

// Live virtual accounts come from a provider over the network, so the
// provider is asked before the account's database transaction opens, never
// inside it. The provider's customer is derived from the merchant, the mode
// and the account_reference, so a retry of a request whose answer was lost
// finds the account the first attempt made instead of making another, and
// an idempotent replay (same Idempotency-Key) answers from the stored
// response without asking again.

// IssueLiveWith makes live-mode accounts come from the router's account
// provider; without it every mode issues sandbox numbers.
func (s *Service) IssueLiveWith(r *rails.Router) { s.router = r }

// holder is who a live account is issued for.
type holder struct {
	first, last, email, phone string
}

// provision asks the live provider for the account in of the context's
// tenant when its mode has one: nil, nil when the sandbox issues the number
// inside the transaction. It fixes in.Reference (a fresh one when absent)
// so the transaction stores the reference the provider was asked with. tx
// is the caller's transaction, which must be nil when a provider is called.
func (s *Service) provision(ctx context.Context, tx *ent.Tx, in *CreateInput, prefix string, who func() (holder, error)) (*preIssued, error) {
	if s.router == nil {
		return nil, nil
	}
	t, ok := tenant.From(ctx)
	if !ok {
		return nil, tenant.ErrNoTenant
	}
	prov, err := s.router.Accounts(t.Mode)
	if err != nil || prov == nil {
		return nil, err
	}
	if tx != nil {
		return nil, fmt.Errorf("accounts: a live account's provider call (the transport must run this request outside a transaction): %w", rails.ErrInTransaction)
	}
	if in.AccountType != nil && *in.AccountType == Dynamic {
		return nil, apperr.New(apperr.RailNotConfigured,
			"dynamic accounts are not available in live mode: no configured provider issues them; use static or static_dynamic")
	}
	if in.Reference == nil {
		ref := uuid.NewString()
		in.Reference = &ref
	}
	taken, err := s.db.Reader().FiatAccount.Query().Where(fiataccount.Reference(*in.Reference)).Exist(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	if taken {
		return nil, duplicate(*in.Reference, prefix)
	}
	h, err := who()
	if err != nil {
		return nil, err
	}
	va, err := prov.CreateVirtualAccount(ctx, rails.VirtualAccountRequest{
		Reference: ProviderAccountReference(t, *in.Reference),
		FirstName: h.first, LastName: h.last, Email: h.email, Phone: h.phone,
	})
	if err != nil {
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return nil, err
		}
		return nil, apperr.Wrap(apperr.Unavailable, err, "the account provider did not issue the account; try again with the same account_reference")
	}
	if va.AccountNumber == "" {
		return nil, apperr.New(apperr.Unavailable, "the account provider answered without an account number; try again with the same account_reference")
	}
	return &preIssued{VirtualAccount: va, provider: prov.Provider()}, nil
}

// preIssued is an account a live provider issued before the transaction
// that stores it.
type preIssued struct {
	rails.VirtualAccount
	provider string
}

// ProviderAccountReference is the reference a live provider knows the
// account ref of tenant t by: unique across merchants and modes (ours is
// unique per merchant and mode only), and made of letters and digits.
func ProviderAccountReference(t tenant.Tenant, ref string) string {
	sum := sha256.Sum256([]byte(t.MerchantID + "\x00" + t.Mode + "\x00" + ref))
	return "acct" + hex.EncodeToString(sum[:16])
}

// walletHolder reads the holder of wallet walletRef, outside any
// transaction.
func (s *Service) walletHolder(ctx context.Context, walletRef string) func() (holder, error) {
	return func() (holder, error) {
		w, err := s.wallets.Get(ctx, nil, walletRef)
		if err != nil {
			return holder{}, err
		}
		return holder{first: w.Firstname, last: w.Lastname, email: w.Email, phone: w.Phone}, nil
	}
}

// inputHolder is the holder of a wallet being created.
func inputHolder(in wallets.CreateInput) func() (holder, error) {
	return func() (holder, error) {
		return holder{first: deref(in.Firstname), last: deref(in.Lastname), email: deref(in.Email), phone: deref(in.Phone)}, nil
	}
}

// merchantHolder is the merchant itself, for its global account.
func (s *Service) merchantHolder(ctx context.Context) func() (holder, error) {
	return func() (holder, error) {
		t, ok := tenant.From(ctx)
		if !ok {
			return holder{}, tenant.ErrNoTenant
		}
		m, err := s.db.Reader().Merchant.Query().Where(merchant.ID(t.MerchantID)).Only(tenant.System(ctx))
		if err != nil {
			return holder{}, store.Classify(err)
		}
		first, last, _ := strings.Cut(strings.TrimSpace(m.Name), " ")
		if last == "" {
			last = first
		}
		return holder{first: first, last: last, email: m.Email}, nil
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// set puts what the provider issued on the account being created.
func (p *preIssued) set(create *ent.FiatAccountCreate) {
	create.SetProvider(p.provider)
	if p.CustomerCode != "" {
		create.SetProviderCustomer(p.CustomerCode)
	}
}
