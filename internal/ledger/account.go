package ledger

import (
	"fmt"
	"strings"

	"merchantpay/internal/money"
	"merchantpay/internal/tenant"
)

// Kind is what an account holds.
type Kind string

// Kinds of account. Main is a merchant's balance; the others are the
// service's own accounts, one per mode and currency.
const (
	Main Kind = "main"
	// RailsClearing is the counterpart of money arriving from or leaving
	// through the bank and crypto rails.
	RailsClearing Kind = "rails_clearing"
	// PayoutsInFlight holds withdrawals accepted but not yet settled by the rails.
	PayoutsInFlight Kind = "payouts_in_flight"
	// Fees collects the service's fees.
	Fees Kind = "fees"
	// FX is the counterpart of currency conversions (swaps, cross payouts).
	FX Kind = "fx"
	// SandboxFunding is where sandbox top-ups come from.
	SandboxFunding Kind = "sandbox_funding"
)

// SystemKinds are the service's own account kinds, in a stable order.
func SystemKinds() []Kind {
	return []Kind{RailsClearing, PayoutsInFlight, Fees, FX, SandboxFunding}
}

// SystemOwner owns the service's own accounts.
const SystemOwner = "system"

// Bucket is one of the two balances of an account.
type Bucket string

// Buckets.
const (
	Available Bucket = "available"
	Pending   Bucket = "pending"
)

func (b Bucket) valid() bool { return b == Available || b == Pending }

// Account names a ledger account. Its id is derived from these four fields,
// so a posting needs no look-up to find it.
type Account struct {
	Owner    string // a merchant id, or SystemOwner
	Mode     string // tenant.Test or tenant.Live
	Currency money.Currency
	Kind     Kind
}

// MerchantAccount is the main balance of a merchant in one mode and currency.
func MerchantAccount(t tenant.Tenant, c money.Currency) Account {
	return Account{Owner: t.MerchantID, Mode: t.Mode, Currency: c, Kind: Main}
}

// SystemAccount is one of the service's own accounts.
func SystemAccount(mode string, c money.Currency, k Kind) Account {
	return Account{Owner: SystemOwner, Mode: mode, Currency: c, Kind: k}
}

// ID is the account's deterministic, readable id:
// "<owner>:<mode>:<currency>:<kind>".
func (a Account) ID() string {
	return a.Owner + ":" + a.Mode + ":" + string(a.Currency) + ":" + string(a.Kind)
}

// TracksBalance reports whether the account's stored balances are kept up
// to date. The service's own accounts are not: every merchant's postings
// touch them, so a stored balance would be one hot row shared by all; their
// balance is the sum of their entries.
func (a Account) TracksBalance() bool { return a.Owner != SystemOwner }

func (a Account) validate() error {
	switch {
	case a.Owner == "" || strings.Contains(a.Owner, ":"):
		return fmt.Errorf("%w: account owner %q", ErrInvalid, a.Owner)
	case a.Mode != tenant.Test && a.Mode != tenant.Live:
		return fmt.Errorf("%w: account mode %q", ErrInvalid, a.Mode)
	case a.Currency.Decimals() < 0:
		return fmt.Errorf("%w: account currency %q", ErrInvalid, a.Currency)
	case a.Kind == "" || strings.Contains(string(a.Kind), ":"):
		return fmt.Errorf("%w: account kind %q", ErrInvalid, a.Kind)
	case (a.Owner == SystemOwner) == (a.Kind == Main):
		// Merchants hold only main accounts, and the system none.
		return fmt.Errorf("%w: account %s: owner %q cannot hold kind %q", ErrInvalid, a.ID(), a.Owner, a.Kind)
	}
	return nil
}

// ParseAccountID is the inverse of Account.ID.
func ParseAccountID(id string) (Account, error) {
	p := strings.Split(id, ":")
	if len(p) != 4 {
		return Account{}, fmt.Errorf("%w: account id %q", ErrInvalid, id)
	}
	a := Account{Owner: p[0], Mode: p[1], Currency: money.Currency(p[2]), Kind: Kind(p[3])}
	if err := a.validate(); err != nil {
		return Account{}, err
	}
	return a, nil
}
