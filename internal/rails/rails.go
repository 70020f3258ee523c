// Package rails is the service's one link to the bank rails: it issues account
// numbers for fiat accounts, resolves account names, and carries payouts out.
// The built-in sandbox implementation (RAILS=sandbox, the default) makes every
// flow runnable without a bank.
package rails

import (
	"context"
	"time"

	"merchantpay/internal/banks"
	"merchantpay/internal/money"
)

// Rails is what operations and workers ask of the bank rails.
//
// No method may be called with the expectation of a network round trip inside
// a database transaction (a transaction makes no network call, so a slow bank
// cannot hold it open): IssueAccountNumber runs inside the account-creation
// transaction, so a networked implementation must answer it from numbers
// reserved ahead of time; ResolveAccount, SubmitPayout and CheckPayout are
// called outside any transaction.
type Rails interface {
	// IssuingBank is the Nigerian bank at which fiat accounts are issued.
	IssuingBank() banks.NGBank

	// IssueAccountNumber proposes a fresh, valid account number at the
	// issuing bank. The caller stores it under the unique index on
	// fiat_accounts.account_number and asks again on a collision, so an
	// implementation need not remember what it issued.
	IssueAccountNumber(ctx context.Context, req IssueRequest) (Issued, error)

	// ResolveAccount is the name enquiry: the holder's name of a 10-digit
	// account number at a listed Nigerian bank (the caller has checked both).
	// It fails with apperr.AccountNotResolved when the bank knows no such
	// account.
	ResolveAccount(ctx context.Context, bankCode, accountNumber string) (accountName string, err error)

	// SubmitPayout hands a payout to the rails. It is idempotent per
	// Payout.Reference: submitting the same payout again returns the same
	// RailsReference and never pays twice. The result is usually
	// PayoutPending; the payout worker then polls CheckPayout from
	// PayoutResult.NextCheck on.
	SubmitPayout(ctx context.Context, p Payout) (PayoutResult, error)

	// CheckPayout tells the outcome of a submitted payout: still
	// PayoutPending (poll again from NextCheck), PayoutSucceeded (with
	// SettledAt) or PayoutFailed (with Reason; the funds never left).
	CheckPayout(ctx context.Context, q PayoutQuery) (PayoutResult, error)
}

// IssueRequest describes the account a number is issued for.
type IssueRequest struct {
	// Reference is the account_reference; AccountName the name to register.
	Reference   string
	AccountName string
}

// Issued is a proposed account number.
type Issued struct {
	AccountNumber string
	BankCode      string
	BankName      string
}

// Payout is one transfer out to a beneficiary's bank account.
type Payout struct {
	// Reference is the service's transaction reference (WTH-<uuid>); the
	// rails use it as their idempotency key.
	Reference string
	Currency  money.Currency
	// Amount is what the beneficiary receives, in minor units of Currency.
	Amount int64
	// Country is banks.CountryNG or banks.CountryGH.
	Country       string
	BankCode      string
	BranchCode    string // Ghana only
	AccountNumber string
	AccountName   string
	Narration     string
}

// PayoutStatus is where a payout stands at the rails.
type PayoutStatus string

// Payout statuses; the values match the Transaction statuses.
const (
	PayoutPending   PayoutStatus = "pending"
	PayoutSucceeded PayoutStatus = "success"
	PayoutFailed    PayoutStatus = "failed"
)

// PayoutResult is the rails' answer about one payout.
type PayoutResult struct {
	Status PayoutStatus
	// RailsReference identifies the payout at the rails; store it.
	RailsReference string
	// NextCheck is when to ask again (PayoutPending only).
	NextCheck time.Time
	// SettledAt is when the money arrived (PayoutSucceeded only).
	SettledAt time.Time
	// Reason says why the payout failed (PayoutFailed only); safe to show
	// as reject_reason.
	Reason string
	// ProviderAmount is what a real provider says the payout is, in minor
	// units of the payout's currency (0 when it does not say; the sandbox
	// never does). A payout whose provider amount differs from ours by any
	// minor unit is not settled.
	ProviderAmount int64
}

// PayoutQuery identifies a submitted payout for CheckPayout. Real rails need
// only RailsReference; the sandbox, which keeps no state, decides from the
// payout itself and the time it was submitted.
type PayoutQuery struct {
	Payout         Payout
	RailsReference string
	SubmittedAt    time.Time
}
