// Package deposits books incoming bank transfers into fiat virtual accounts
// (static, static_dynamic tied to a !!REF!! in the narration, and dynamic,
// bound by amount and expiry): each transfer becomes one DEPOSIT transaction,
// accepted (the merchant's NGN balance is credited) or refunded (nothing is
// credited, reject_reason says why), with its event in the outbox, all in one
// database transaction.
package deposits

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/accounts"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/ledger"
	"merchantpay/internal/merchants"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/transactions"
)

// Fixed values of a deposit transaction.
const (
	Type        = "DEPOSIT"
	PaymentSlug = "instant-bank-deposit"
	Destination = "main_balance"
	// Channel says the money came over the bank rails.
	Channel = "BANK_TRANSFER"
	// FromParty and ToParty mirror a withdrawal's SELF → OTHER: a deposit
	// comes from someone else to the merchant.
	FromParty = "OTHER"
	ToParty   = "SELF"
	// FeeBearer: the deposit fee is taken from what the merchant receives.
	FeeBearer = "merchant"
	// ReferencePrefix starts every deposit's service reference.
	ReferencePrefix = transactions.DepositPrefix
)

// Statuses of a deposit: a bank transfer arrives settled, so it is never
// pending.
const (
	StatusSuccess  = "success"
	StatusRefunded = "refunded"
)

// Limits of the free-text fields of a transfer, in characters.
const (
	MaxNarration  = 500
	MaxSenderName = 100
	MaxSenderBank = 100
)

// Currency is the currency of fiat accounts, hence of their deposits.
const Currency = accounts.Currency

// Fee is the operator's deposit fee: Flat NGN per deposit plus Percent of
// the amount (1.5 means 1.5%), rounded down to the kobo. The zero value
// charges nothing, the default.
type Fee struct {
	Flat    decimal.Decimal
	Percent decimal.Decimal
}

// Validate checks the fee rule.
func (f Fee) Validate() error {
	if f.Flat.Sign() < 0 {
		return fmt.Errorf("deposits: flat fee %s is negative", f.Flat)
	}
	if _, err := money.ToMinor(f.Flat, Currency); err != nil {
		return fmt.Errorf("deposits: flat fee %s: %w", f.Flat, err)
	}
	if f.Percent.Sign() < 0 || f.Percent.GreaterThanOrEqual(decimal.New(100, 0)) {
		return fmt.Errorf("deposits: percentage fee %s is not in [0, 100)", f.Percent)
	}
	return nil
}

// On returns the fee, in minor units, on a deposit of amount minor units.
func (f Fee) On(amount int64) (int64, error) {
	flat, err := money.ToMinor(f.Flat, Currency)
	if err != nil {
		return 0, err
	}
	if f.Percent.IsZero() {
		return flat, nil
	}
	pct, err := money.RoundQuo(money.FromMinor(amount, Currency).Mul(f.Percent), decimal.New(100, 0), Currency, money.Down)
	if err != nil {
		return 0, err
	}
	return flat + pct, nil
}

// Config is the operator's deposit settings.
type Config struct {
	Fee Fee
	// Simulations says in which modes Simulate exists.
	Simulations rails.Simulations
}

// Service books deposits.
type Service struct {
	db       *store.DB
	clock    clock.Clock
	ledger   *ledger.Service
	accounts *accounts.Service
	outbox   *events.Outbox
	cfg      Config
}

// New returns the deposits service; it refuses an invalid fee rule.
func New(db *store.DB, c clock.Clock, l *ledger.Service, a *accounts.Service, o *events.Outbox, cfg Config) (*Service, error) {
	if err := cfg.Fee.Validate(); err != nil {
		return nil, err
	}
	return &Service{db: db, clock: c, ledger: l, accounts: a, outbox: o, cfg: cfg}, nil
}

// Simulate is the sandbox's simulated incoming transfer (POST
// /sandbox/deposits/bank-transfer): it validates in and books it with
// Receive for the context's tenant, in tx, the request's transaction handed
// to it (with tx nil, in one of its own). It is NOT_FOUND, as an unknown
// route, in a mode where the simulations are not offered.
func (s *Service) Simulate(ctx context.Context, tx *ent.Tx, in Input) (*ent.Transaction, error) {
	if err := s.cfg.Simulations.CheckTenant(ctx); err != nil {
		return nil, err
	}
	var f apperr.Fields
	Validate(in, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	return s.Receive(ctx, tx, in.Transfer())
}

// Receive books one incoming transfer as one DEPOSIT transaction, in tx, the
// caller's database transaction handed to it (with tx nil, in one of its
// own), which each step is handed as an argument: the account look-up, the
// decision, the dynamic account's closing, the transaction row, its event
// and the ledger credit commit together.
//
// ctx acting for a tenant (the sandbox endpoint) may only pay into that
// tenant's accounts: any other account number is NOT_FOUND, as an unknown one
// is. ctx marked tenant.System (the rails' webhook) may pay into any
// account, and the deposit is booked for the account's owner.
//
// The outcome is in the returned transaction's status: success or refunded
// (with reject_reason). Errors are only for transfers that cannot be booked
// at all (validation, unknown account) and for failures.
func (s *Service) Receive(ctx context.Context, tx *ent.Tx, tr Transfer) (*ent.Transaction, error) {
	b, err := s.receive(ctx, tx, tr)
	return b.Transaction, err
}

// receive is Receive, telling also why a narration's reference was dropped.
func (s *Service) receive(ctx context.Context, tx *ent.Tx, tr Transfer) (Booked, error) {
	var f apperr.Fields
	Validate(tr.input(), &f)
	if err := f.Err(); err != nil {
		return Booked{}, err
	}
	amount, err := money.ToMinor(tr.Amount, Currency)
	if err != nil {
		return Booked{}, err // unreachable after Validate
	}
	caller, scoped, err := tenant.Scope(ctx)
	if err != nil {
		return Booked{}, err
	}
	var out Booked
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		acc, err := s.accounts.ByNumber(ctx, tx, tr.AccountNumber)
		if err != nil {
			return err
		}
		owner := tenant.Tenant{MerchantID: acc.MerchantID, Mode: acc.Mode}
		if tr.Provider != "" && (acc.Provider == nil || *acc.Provider != tr.Provider) {
			// A provider pays only into the accounts it issued.
			return apperr.New(apperr.NotFound, "no account with account_number %q issued by %s", tr.AccountNumber, tr.Provider)
		}
		if scoped && caller != owner {
			// Not caller's: answer as for an unknown number, so existence
			// does not leak.
			return apperr.New(apperr.NotFound, "no account with account_number %q", tr.AccountNumber)
		}
		ctx = tenant.With(ctx, owner)
		out, err = s.book(ctx, tx, acc, tr, amount)
		return err
	})
	if err != nil {
		return Booked{}, err
	}
	return out, nil
}

// book decides and records a deposit into acc in tx; ctx acts for acc's
// tenant.
func (s *Service) book(ctx context.Context, tx *ent.Tx, acc *ent.FiatAccount, tr Transfer, amount int64) (Booked, error) {
	now := s.clock.Now()
	d, err := s.decide(ctx, tx, acc, tr, amount, now)
	if err != nil {
		return Booked{}, err
	}
	if d.refund != "" && tr.NoRefund {
		// The rails cannot send it back: telling the merchant it was
		// refunded would be false.
		return Booked{}, &NotCredited{Reason: d.refund}
	}
	c := tx.Client()
	merchant, err := merchants.Name(ctx, c, acc.MerchantID)
	if err != nil {
		return Booked{}, err
	}
	ref := ReferencePrefix + uuid.NewString()
	insert := func(d decision) (*ent.Transaction, error) {
		return s.insert(ctx, c, acc, tr, amount, d, ref, merchant, now)
	}
	var t *ent.Transaction
	var dropped string
	if d.ref == "" {
		t, err = insert(d)
	} else {
		t, dropped, err = s.insertClaimingRef(ctx, c, d, tr.NoRefund, insert)
	}
	if err != nil {
		return Booked{}, err
	}
	typ := events.DepositSuccess
	if t.Status == StatusRefunded {
		typ = events.DepositRefunded
	}
	// The event before the credit: the credit locks the merchant's balance
	// row, which is best held only until the commit.
	if err := s.outbox.Emit(ctx, tx, typ, t); err != nil {
		return Booked{}, err
	}
	if t.Status == StatusSuccess {
		if err := s.credit(ctx, tx, t, acc); err != nil {
			return Booked{}, err
		}
	}
	return Booked{Transaction: t, RefDropped: dropped}, nil
}

// savepoint lets the insert that claims a merchant reference fail on the
// unique index without aborting the surrounding transaction (PostgreSQL
// aborts a transaction at its first error).
const savepoint = "deposit_reference"

// insertClaimingRef inserts an accepted deposit that claims d.ref. Merchant
// references are unique per merchant and mode across all transactions,
// compared without regard to case: when d.ref is already taken, by an earlier
// deposit or a withdrawal, the deposit is refunded instead. Paying the same
// reference twice is most likely the payer's mistake, and tying the money to
// the wrong order or silently dropping the reference would be worse. A
// refunded deposit never claims a reference, so the payer may pay again under
// it. A reference of the form of the service's own (WTH-, DEP-, SWP- and a
// UUID) is one no merchant reference may take, since a look-up by reference
// would find the service's transaction instead: it is refunded the same way.
//
// With noRefund (rails that cannot send money back) the deposit is not
// refunded but accepted without the merchant reference, its narration kept
// as it is; dropped then says why the reference was not kept. c is the
// client of the deposit's transaction.
func (s *Service) insertClaimingRef(ctx context.Context, c *ent.Client, d decision, noRefund bool,
	insert func(decision) (*ent.Transaction, error)) (t *ent.Transaction, dropped string, err error) {
	unkept := func(why string) (*ent.Transaction, string, error) {
		d.ref = ""
		if noRefund {
			t, err := insert(d)
			return t, why, err
		}
		d.refund = why
		t, err := insert(d)
		return t, "", err
	}
	if _, ok := transactions.ServiceReference(d.ref); ok {
		return unkept(fmt.Sprintf("the narration's reference %q has the form of the service's own references, which a merchant reference may not have", d.ref))
	}
	key := transactions.ReferenceKey(d.ref)
	taken, err := c.Transaction.Query().Where(transaction.MerchantReferenceKey(key)).Exist(ctx)
	if err != nil {
		return nil, "", store.Classify(err)
	}
	if !taken {
		if _, err := c.ExecContext(ctx, "SAVEPOINT "+savepoint); err != nil {
			return nil, "", store.Classify(err)
		}
		t, err := insert(d)
		if err == nil {
			if _, err := c.ExecContext(ctx, "RELEASE SAVEPOINT "+savepoint); err != nil {
				return nil, "", store.Classify(err)
			}
			return t, "", nil
		}
		if !store.IsUniqueViolation(err) {
			return nil, "", err
		}
		if _, rerr := c.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+savepoint); rerr != nil {
			return nil, "", store.Classify(rerr)
		}
		// A concurrent transaction claimed it after the check above, unless
		// the violation was of another index.
		if taken, qerr := c.Transaction.Query().Where(transaction.MerchantReferenceKey(key)).Exist(ctx); qerr != nil {
			return nil, "", store.Classify(qerr)
		} else if !taken {
			return nil, "", fmt.Errorf("deposits: insert: %w", err)
		}
	}
	return unkept(fmt.Sprintf("the narration's reference %q is already used by another transaction of this merchant (references ignore case)", d.ref))
}

// insert writes the deposit's transaction row through c, the client of the
// deposit's transaction.
func (s *Service) insert(ctx context.Context, c *ent.Client, acc *ent.FiatAccount, tr Transfer, amount int64, d decision,
	ref, merchant string, now time.Time) (*ent.Transaction, error) {
	id, err := uuid.NewV7() // time-ordered: lists keep creation order within a millisecond
	if err != nil {
		return nil, err
	}
	cur := acc.Currency
	fee, settled := d.fee, amount-d.fee
	status := StatusSuccess
	if d.refund != "" {
		// Nothing reaches the merchant, so no fee is taken either.
		status, fee, settled = StatusRefunded, 0, 0
	}
	create := c.Transaction.Create().SetID(id.String()).SetReference(ref).
		SetType(Type).SetPurpose(Type).SetStatus(status).
		SetFromAmount(amount).SetFromCurrency(cur).SetAmount(amount).SetCurrency(cur).
		SetAmountCharged(amount).SetAmountSettled(settled).SetFee(fee).SetFeeCurrency(cur).
		SetFromParty(FromParty).SetToParty(ToParty).SetChannel(Channel).SetNarration(tr.Narration).
		SetFeeBearer(FeeBearer).SetDestination(Destination).SetPaymentSlug(PaymentSlug).
		SetFromMerchant(merchant).
		SetNillableWalletReference(acc.WalletReference).SetAccountReference(acc.Reference).SetAccountID(acc.ID).
		SetNillableSenderName(nonEmpty(tr.SenderName)).SetNillableSenderBank(nonEmpty(tr.SenderBank)).
		SetCreatedAt(now).SetUpdatedAt(now)
	if d.refund != "" {
		create.SetRejectReason(d.refund)
	} else {
		create.SetSettledAt(now).SetSettlementDate(now)
	}
	if tr.ProviderReference != "" {
		create.SetProvider(tr.Provider).SetProviderReference(tr.ProviderReference)
	}
	if d.ref != "" {
		create.SetMerchantReference(d.ref).SetMerchantReferenceKey(transactions.ReferenceKey(d.ref))
	}
	t, err := create.Save(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	return t, nil
}

// credit posts an accepted deposit: the rails clearing account gives the
// amount, the merchant's main balance gets amount_settled, the fees account
// the fee, in tx. The posting id is derived from the reference, so it can
// never be posted twice.
func (s *Service) credit(ctx context.Context, tx *ent.Tx, t *ent.Transaction, acc *ent.FiatAccount) error {
	owner := tenant.Tenant{MerchantID: acc.MerchantID, Mode: acc.Mode}
	cur := money.Currency(t.Currency)
	entries := []ledger.Entry{
		{Account: ledger.SystemAccount(owner.Mode, cur, ledger.RailsClearing), Amount: -t.Amount},
		{Account: ledger.MerchantAccount(owner, cur), Amount: t.AmountSettled},
	}
	if t.Fee > 0 {
		entries = append(entries, ledger.Entry{Account: ledger.SystemAccount(owner.Mode, cur, ledger.Fees), Amount: t.Fee})
	}
	_, err := s.ledger.Post(ctx, tx, ledger.Posting{ID: t.Reference + ":deposit", TransactionRef: t.Reference,
		Memo: "deposit into account " + acc.Reference, Entries: entries})
	return err
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
