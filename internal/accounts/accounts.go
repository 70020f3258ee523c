// Package accounts issues fiat virtual accounts, NGN only, each numbered with
// a 10-digit NUBAN: static, static_dynamic and dynamic accounts on a wallet,
// the merchant's global static_dynamic account, and the look-ups that deposits
// need.
package accounts

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/fiataccount"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/merchants"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/wallets"
)

// Account types.
const (
	Static        = "static"
	StaticDynamic = "static_dynamic"
	Dynamic       = "dynamic"
)

// Types are the accepted account_type values.
var Types = []string{Static, StaticDynamic, Dynamic}

// reject_amount_criteria values of dynamic accounts.
const (
	CriteriaNotEqual        = "NOT_EQUAL"
	CriteriaGreaterThanOnly = "GREATER_THAN_ONLY"
	CriteriaLessThanOnly    = "LESS_THAN_ONLY"
	CriteriaNone            = "NONE"
)

// Criteria are the accepted reject_amount_criteria values.
var Criteria = []string{CriteriaNotEqual, CriteriaGreaterThanOnly, CriteriaLessThanOnly, CriteriaNone}

// Account statuses. Only dynamic accounts close: after their first accepted
// deposit (Close); expiry is read from expires_at (Expired).
const (
	StatusActive = "active"
	StatusClosed = "closed"
)

// Currency is the only currency of fiat accounts.
const Currency = money.NGN

// MaxExpiryMinutes is the longest life of a dynamic account.
const MaxExpiryMinutes = 60

// MaxNameLength bounds account_name, in characters: bank name-enquiry
// answers and statements print about this much.
const MaxNameLength = 64

// Service issues and reads fiat accounts.
type Service struct {
	db      *store.DB
	clock   clock.Clock
	rails   rails.Rails
	wallets *wallets.Service
	// router, when set, issues live-mode accounts at a provider (see
	// IssueLiveWith).
	router *rails.Router
}

// New returns the accounts service.
func New(db *store.DB, c clock.Clock, r rails.Rails, w *wallets.Service) *Service {
	return &Service{db: db, clock: c, rails: r, wallets: w}
}

// Create issues an account on the wallet walletRef of the context's tenant
// (POST /wallets/{wallet_reference}). An unknown wallet, or one of another
// merchant or mode, is NOT_FOUND. prefix is prepended to the names of the
// account's fields in errors, as the caller's input nests them ("account."
// in GraphQL's createFiatAccount; "" in REST, whose body is the account).
//
// It runs in tx, the request's transaction handed to it, or, when tx is nil
// (a live mode's request, which runs outside one, and tests), in one of its
// own.
func (s *Service) Create(ctx context.Context, tx *ent.Tx, walletRef string, in CreateInput, prefix string) (*ent.FiatAccount, error) {
	var f apperr.Fields
	Validate(in, prefix, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	pre, err := s.provision(ctx, tx, &in, prefix, s.walletHolder(ctx, walletRef))
	if err != nil {
		return nil, err
	}
	var a *ent.FiatAccount
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		w, err := wallets.GetIn(ctx, tx.Client(), walletRef)
		if err != nil {
			return err
		}
		a, err = s.issue(ctx, tx.Client(), w, in, prefix, pre)
		return err
	})
	return a, err
}

// CreateGlobal issues the merchant's global static_dynamic account, which
// belongs to no wallet (POST /accounts). A merchant may hold several, each
// with its own account_reference. prefix and tx are Create's.
func (s *Service) CreateGlobal(ctx context.Context, tx *ent.Tx, in CreateInput, prefix string) (*ent.FiatAccount, error) {
	var f apperr.Fields
	ValidateGlobal(in, prefix, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	in.AccountType = ptr(StaticDynamic)
	pre, err := s.provision(ctx, tx, &in, prefix, s.merchantHolder(ctx))
	if err != nil {
		return nil, err
	}
	var a *ent.FiatAccount
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		a, err = s.issue(ctx, tx.Client(), nil, in, prefix, pre)
		return err
	})
	return a, err
}

// CreateWallet creates a wallet and, when acc is not nil, its inline account
// (the `account` object of a wallet request) in one transaction. Every bad
// field of both is reported at once, the account's as "account.<field>";
// nothing is created unless both are. tx is Create's.
func (s *Service) CreateWallet(ctx context.Context, tx *ent.Tx, win wallets.CreateInput, acc *CreateInput) (*ent.Wallet, *ent.FiatAccount, error) {
	var f apperr.Fields
	wallets.Validate(win, &f)
	if acc != nil {
		Validate(*acc, "account.", &f)
	}
	if err := f.Err(); err != nil {
		return nil, nil, err
	}
	var pre *preIssued
	if acc != nil {
		var err error
		if pre, err = s.provision(ctx, tx, acc, "account.", inputHolder(win)); err != nil {
			return nil, nil, err
		}
	}
	var a *ent.FiatAccount
	w, err := s.wallets.Create(ctx, tx, win, func(ctx context.Context, tx *ent.Tx, w *ent.Wallet) error {
		if acc == nil {
			return nil
		}
		var err error
		a, err = s.issue(ctx, tx.Client(), w, *acc, "account.", pre)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return w, a, nil
}

// maxIssueAttempts bounds the retries after an account-number collision;
// with random serials over 900 million values even one retry is rare.
const maxIssueAttempts = 8

// savepoint lets the insert of an account fail on a colliding account number
// without aborting the surrounding transaction (PostgreSQL aborts a
// transaction at its first error; SQLite does not, but the same statements
// work there).
const savepoint = "fiat_account_issue"

// issue inserts a validated account with c, the client of the caller's
// transaction. w is nil for the global account; pre is the account a live
// provider issued, nil for a sandbox number.
func (s *Service) issue(ctx context.Context, c *ent.Client, w *ent.Wallet, in CreateInput, prefix string, pre *preIssued) (*ent.FiatAccount, error) {
	ref := uuid.NewString()
	if in.Reference != nil {
		ref = *in.Reference
	}
	if taken, err := c.FiatAccount.Query().Where(fiataccount.Reference(ref)).Exist(ctx); err != nil {
		return nil, store.Classify(err)
	} else if taken {
		return nil, duplicate(ref, prefix)
	}
	name, err := accountName(ctx, c, w)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	kind := *in.AccountType
	for attempt := 1; ; attempt++ {
		var iss rails.Issued
		if pre != nil {
			iss = rails.Issued{AccountNumber: pre.AccountNumber, BankCode: pre.BankCode, BankName: pre.BankName}
			if pre.AccountName != "" {
				name = pre.AccountName
			}
		} else if iss, err = s.rails.IssueAccountNumber(ctx, rails.IssueRequest{Reference: ref, AccountName: name}); err != nil {
			return nil, err
		}
		// Time-ordered ids keep the listing in creation order when two
		// accounts share a created_at millisecond.
		id, err := uuid.NewV7()
		if err != nil {
			return nil, err
		}
		create := c.FiatAccount.Create().SetID(id.String()).SetReference(ref).
			SetAccountType(kind).SetCurrency(string(Currency)).
			SetAccountNumber(iss.AccountNumber).SetAccountName(name).
			SetBankName(iss.BankName).SetBankCode(iss.BankCode).
			SetStatus(StatusActive).SetCreatedAt(now).SetUpdatedAt(now)
		if w != nil {
			create.SetWalletID(w.ID).SetWalletReference(w.Reference)
		}
		if pre != nil {
			pre.set(create)
		}
		if kind == Dynamic {
			amount, err := money.ToMinor(*in.Amount, Currency)
			if err != nil {
				return nil, err // unreachable after Validate
			}
			minutes, _ := expiryMinutes(*in.ExpiresAt)
			criteria := CriteriaNotEqual
			if in.RejectAmountCriteria != nil {
				criteria = *in.RejectAmountCriteria
			}
			create.SetAmount(amount).SetExpiresAt(now.Add(time.Duration(minutes) * time.Minute)).
				SetRejectAmountCriteria(criteria)
		}
		if _, err := c.ExecContext(ctx, "SAVEPOINT "+savepoint); err != nil {
			return nil, store.Classify(err)
		}
		a, err := create.Save(ctx)
		if err == nil {
			if _, err := c.ExecContext(ctx, "RELEASE SAVEPOINT "+savepoint); err != nil {
				return nil, store.Classify(err)
			}
			return a, nil
		}
		if !store.IsUniqueViolation(err) {
			return nil, store.Classify(err)
		}
		if _, rerr := c.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+savepoint); rerr != nil {
			return nil, store.Classify(rerr)
		}
		// Either the reference was taken meanwhile by a concurrent request,
		// or the account number collided: tell which, and retry the latter.
		if taken, qerr := c.FiatAccount.Query().Where(fiataccount.Reference(ref)).Exist(ctx); qerr != nil {
			return nil, store.Classify(qerr)
		} else if taken {
			return nil, duplicate(ref, prefix)
		}
		if pre != nil {
			return nil, fmt.Errorf("accounts: the provider's account number %s is stored already: %w", iss.AccountNumber, err)
		}
		if attempt == maxIssueAttempts {
			return nil, fmt.Errorf("accounts: no free account number after %d attempts: %w", attempt, err)
		}
	}
}

func duplicate(ref, prefix string) error {
	return &apperr.Error{Kind: apperr.DuplicateReference,
		Message: fmt.Sprintf("an account with account_reference %q already exists", ref),
		Fields:  []apperr.FieldError{{Field: prefix + "account_reference", Message: "is already used by another account"}}}
}

// accountName names the merchant and the wallet holder: "Merchant / Firstname
// Lastname", at most MaxNameLength characters, shortening the merchant's
// part first so the holder stays readable. The global account carries the
// merchant's name alone.
func accountName(ctx context.Context, c *ent.Client, w *ent.Wallet) (string, error) {
	merchant, err := merchantName(ctx, c)
	if err != nil {
		return "", err
	}
	if w == nil {
		return AccountName(merchant, ""), nil
	}
	return AccountName(merchant, wallets.FullName(w)), nil
}

func merchantName(ctx context.Context, c *ent.Client) (string, error) {
	t, ok := tenant.From(ctx)
	if !ok {
		return "", tenant.ErrNoTenant
	}
	return merchants.Name(ctx, c, t.MerchantID)
}

// AccountName builds an account_name from the merchant's and the holder's
// names (holder "" for the global account).
func AccountName(merchant, holder string) string {
	merchant, holder = strings.Join(strings.Fields(merchant), " "), strings.Join(strings.Fields(holder), " ")
	if holder == "" {
		return cut(merchant, MaxNameLength)
	}
	const sep = " / "
	// Keep at least 20 characters of the merchant's name so it stays
	// recognisable; a very long holder name is cut at the end instead.
	room := max(MaxNameLength-utf8.RuneCountInString(sep+holder), 20)
	return cut(cut(merchant, room)+sep+holder, MaxNameLength)
}

// cut shortens s to at most n characters, without trailing spaces.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	return strings.TrimRight(string(r), " /")
}

// Close marks an active account closed, as a dynamic account is after its
// first accepted deposit. It is a conditional update from active, so of two
// deposits racing for one dynamic account exactly one sees closed true; the
// other must refund. ctx must act for the account's tenant (or be
// tenant.System); tx is the deposit's transaction, handed to it as an
// argument.
func (s *Service) Close(ctx context.Context, tx *ent.Tx, a *ent.FiatAccount) (closed bool, err error) {
	n, err := tx.Client().FiatAccount.Update().
		Where(fiataccount.ID(a.ID), fiataccount.Status(StatusActive)).
		SetStatus(StatusClosed).SetUpdatedAt(s.clock.Now()).Save(ctx)
	if err != nil {
		return false, store.Classify(err)
	}
	return n == 1, nil
}

// Expired reports whether a dynamic account's life is over at now. Static
// accounts never expire.
func Expired(a *ent.FiatAccount, now time.Time) bool {
	return a.ExpiresAt != nil && !now.Before(*a.ExpiresAt)
}

// AmountRejected reports whether a deposit of paid (minor units) breaks a
// dynamic account's reject_amount_criteria for the expected amount.
func AmountRejected(criteria string, expected, paid int64) bool {
	switch criteria {
	case CriteriaNone:
		return false
	case CriteriaGreaterThanOnly:
		return paid > expected
	case CriteriaLessThanOnly:
		return paid < expected
	default: // NOT_EQUAL, the default
		return paid != expected
	}
}

func ptr[T any](v T) *T { return &v }
