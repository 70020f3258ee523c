// Package withdrawals is money out (POST /transactions/withdraw): accepting a
// withdrawal to a Nigerian or Ghanaian bank account, direct or cross-currency,
// and the payout worker that carries it through the rails to success or
// failure.
//
// Accepting is one database transaction: the quote's consumption (cross),
// the pending WITHDRAWAL row, its withdrawal.pending event and, last, the
// conditional debit of the merchant's balance into PayoutsInFlight. The
// payout worker (payouts.go) then submits it to the rails outside any
// transaction and records the outcome in another: success moves the money
// on to RailsClearing and Fees; failure reverses the debit.
package withdrawals

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/banks"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/jobs"
	"merchantpay/internal/ledger"
	"merchantpay/internal/merchants"
	"merchantpay/internal/money"
	"merchantpay/internal/rails"
	"merchantpay/internal/rates"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/transactions"
)

// Fixed values of a withdrawal transaction, the same on every one.
const (
	Type            = "WITHDRAWAL"
	PaymentSlug     = "instant-bank-payout"
	Destination     = "main_balance"
	Channel         = "API"
	FromParty       = "SELF"
	ToParty         = "OTHER"
	ReferencePrefix = transactions.WithdrawalPrefix
)

// Statuses of a withdrawal: pending until the rails settle it.
const (
	StatusPending = "pending"
	StatusSuccess = "success"
	StatusFailed  = "failed"
)

// Who bears the payout fee.
const (
	FeeBearerMerchant    = "merchant"
	FeeBearerBeneficiary = "beneficiary"
)

// Ghanaian account types.
const (
	AccountIndividual = "individual"
	AccountCorporate  = "corporate"
)

// Limits of free-text fields, in characters.
const (
	MaxNarration = 255
	MaxBankCode  = 32
)

// Currencies are the payout currencies: NGN to Nigerian banks, GHS to
// Ghanaian ones.
func Currencies() []money.Currency { return []money.Currency{money.NGN, money.GHS} }

// countryOf is the bank country of a payout currency, "" for any other.
func countryOf(c money.Currency) string {
	switch c {
	case money.NGN:
		return banks.CountryNG
	case money.GHS:
		return banks.CountryGH
	}
	return ""
}

// DebitPostingID is the id of the posting that debits the merchant when
// withdrawal ref is accepted; a failure reverses exactly this posting.
func DebitPostingID(ref string) string { return ref + ":debit" }

// SettlePostingID is the id of the posting that completes a successful payout.
func SettlePostingID(ref string) string { return ref + ":settle" }

// Service accepts withdrawals.
type Service struct {
	db     *store.DB
	clock  clock.Clock
	ledger *ledger.Service
	rates  *rates.Service
	banks  *banks.Directory
	outbox *events.Outbox
	fees   FeeTable
	// waker wakes this instance's payout worker after a withdrawal commits.
	waker jobs.Waker
	// router picks each payout's rails by its mode and country: Withdraw
	// refuses, before it changes anything, a payout it has none for (a live
	// payout to a country whose provider is not configured), and the payout
	// worker submits each payout to the provider it picks.
	router *rails.Router
}

// New returns the withdrawals service, whose payouts go through router,
// which must not be nil.
func New(db *store.DB, c clock.Clock, l *ledger.Service, r *rates.Service, dir *banks.Directory, o *events.Outbox, fees FeeTable, router *rails.Router) *Service {
	return &Service{db: db, clock: c, ledger: l, rates: r, banks: dir, outbox: o, fees: fees, waker: jobs.NewWaker(), router: router}
}

// Fees is the operator's payout fee table.
func (s *Service) Fees() FeeTable { return s.fees }

// terms are the amounts of one withdrawal, in minor units.
type terms struct {
	cur                           money.Currency // currency paid out (= to_currency when cross)
	amount, fee, charged, settled int64
	fromCur                       money.Currency
	from                          int64 // debited from the merchant, in fromCur
	quote                         *ent.Quote
}

// direct prices a direct withdrawal with the operator's fee table.
func (s *Service) direct(in Input) (terms, error) {
	cur := money.Currency(*in.Currency)
	amount, err := money.ToMinor(*in.Amount, cur)
	if err != nil {
		return terms{}, err // unreachable after Validate
	}
	fee, err := s.fees.Fee(cur, amount)
	if err != nil {
		return terms{}, err
	}
	t := terms{cur: cur, amount: amount, fee: fee, charged: amount + fee, settled: amount, fromCur: cur, from: amount}
	if feeBearer(in) == FeeBearerBeneficiary {
		t.charged, t.settled = amount, amount-fee
		if t.settled <= 0 {
			return terms{}, apperr.New(apperr.AmountTooSmall,
				"the amount %s %s does not cover the payout fee of %s %s borne by the beneficiary; send a larger amount",
				money.Format(amount, cur), cur, money.Format(fee, cur), cur)
		}
	}
	return t, nil
}

// crossTerms prices a cross withdrawal from its quote: the quote's fee is its
// only fee, whoever fee_bearer names.
func crossTerms(q *ent.Quote) terms {
	return terms{cur: money.Currency(q.ToCurrency), amount: q.ToAmount, fee: q.Fee,
		charged: q.ToAmount + q.Fee, settled: q.ToAmount,
		fromCur: money.Currency(q.FromCurrency), from: q.FromAmount, quote: q}
}

func feeBearer(in Input) string {
	if in.FeeBearer == nil {
		return FeeBearerMerchant
	}
	return *in.FeeBearer
}

// Withdraw accepts a withdrawal for the merchant and mode of ctx, in tx, the
// request's database transaction handed to it (the one idem.Store.Do opened,
// which commits it after storing the answer), or, when tx is nil (tests, the
// CLI), in one of its own. Every statement below runs in that transaction,
// which each step is handed as an argument.
//
// The quote's consumption (cross), the pending transaction, its
// withdrawal.pending event and the debit of the merchant's balance commit
// together or not at all. What runs, in order:
//
//  1. Check: every field, and the bank and branch (no statement).
//  2. direct: the price from the fee table (no statement).
//  3. s.db.Within runs the rest in tx (or begins a transaction).
//  4. A cross withdrawal consumes its quote (one UPDATE) and is priced
//     from it.
//  5. The rails router says whether the mode and the payout's country
//     have rails (no statement); a live payout to a country whose
//     provider is not configured is refused, rolling a consumed quote
//     back.
//  6. The merchant's name: from the principal, else one SELECT.
//  7. The row and its event are built here, in Go, with their INSERTs
//     (row and rowInsert, in row.go; events.Outbox.Rows): nothing is sent.
//  8. ledger.Service.Payout sends a SAVEPOINT and then, in one statement
//     on PostgreSQL, the row's INSERT, the event's, the ledger entries and
//     the conditional debit of one slot of the balance. When that slot
//     falls short, it rolls back to the savepoint and takes the amount
//     from the whole balance instead. It is the last write: the slot (or
//     the row) stays locked until the commit.
//  9. After the commit, this instance's payout worker is woken; any
//     instance's would find the row anyway (next_run_at is now).
//
// Errors: VALIDATION_ERROR (every bad field); UNKNOWN_BANK, UNKNOWN_BRANCH;
// AMOUNT_TOO_SMALL when the beneficiary's fee leaves nothing to pay;
// Consume's NOT_FOUND, RATE_TYPE_MISMATCH, RATE_USED, RATE_EXPIRED;
// RAIL_NOT_CONFIGURED; DUPLICATE_REFERENCE; INSUFFICIENT_BALANCE. After an error the caller's
// transaction must roll back (idem's does): rows may have been written.
func (s *Service) Withdraw(ctx context.Context, tx *ent.Tx, in Input) (*ent.Transaction, error) {
	if err := s.Check(in, &apperr.Fields{}); err != nil {
		return nil, err
	}
	tn, ok := tenant.From(ctx)
	if !ok {
		return nil, tenant.ErrNoTenant
	}
	var tm terms
	if !in.cross() {
		var err error
		if tm, err = s.direct(in); err != nil {
			return nil, err
		}
	}
	ref := ReferencePrefix + uuid.NewString()
	var out *ent.Transaction
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		if in.cross() {
			q, err := s.rates.Consume(ctx, tx, *in.RateReference, rates.Withdrawal, ref)
			if err != nil {
				return err
			}
			if err := s.checkQuote(q, in); err != nil {
				return err // rolls the consumption back
			}
			tm = crossTerms(q)
		}
		if err := s.router.CheckPayouts(tn.Mode, countryOf(tm.cur)); err != nil {
			return err // rolls a consumed quote back
		}
		name, err := merchants.Name(ctx, tx.Client(), tn.MerchantID)
		if err != nil {
			return err
		}
		t, err := s.row(ctx, tn, in, tm, ref, name)
		if err != nil {
			return err
		}
		event, err := s.outbox.Rows(ctx, tx, events.WithdrawalPending, []*ent.Transaction{t})
		if err != nil {
			return err
		}
		_, err = s.ledger.Payout(ctx, tx, debitPosting(tn, t, tm), []store.Stmt{rowInsert(s.db.Dialect, t), event})
		if in.Reference != nil && store.IsUniqueViolation(err) {
			// The only unique value of these rows not made here.
			return transactions.DuplicateReference(*in.Reference)
		}
		if err != nil {
			return store.Classify(fmt.Errorf("withdrawals: accept %s: %w", ref, err))
		}
		store.OnCommit(tx, s.waker.Wake)
		out = t
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkQuote checks a cross withdrawal against its quote: the beneficiary
// has the shape the quote's to_currency asks for, and an amount or currency
// sent beside the quote is the quote's.
func (s *Service) checkQuote(q *ent.Quote, in Input) error {
	country := countryOf(money.Currency(q.ToCurrency))
	if country == "" {
		return &apperr.Error{Kind: apperr.Validation,
			Message: fmt.Sprintf("the rate %s pays out %s; withdrawals pay out NGN or GHS only", q.ID, q.ToCurrency),
			Fields:  []apperr.FieldError{{Field: "rate_reference", Message: "must be a withdrawal quote whose to_currency is NGN or GHS"}}}
	}
	var f apperr.Fields
	rates.CheckBeside(q, in.Amount, in.Currency, &f)
	validateBeneficiary(*in.Beneficiary, country, &f)
	return f.With(s.checkBank(*in.Beneficiary, country))
}

// debitPosting is the acceptance's posting: amount_charged leaves the
// merchant's available balance for PayoutsInFlight. A cross withdrawal
// debits the quote's from_amount in from_currency, converted through FX.
func debitPosting(tn tenant.Tenant, t *ent.Transaction, tm terms) ledger.Posting {
	p := ledger.Posting{ID: DebitPostingID(t.Reference), TransactionRef: t.Reference, Memo: "withdrawal " + t.Reference}
	if tm.quote == nil {
		p.Entries = []ledger.Entry{
			{Account: ledger.MerchantAccount(tn, tm.cur), Amount: -tm.charged},
			{Account: ledger.SystemAccount(tn.Mode, tm.cur, ledger.PayoutsInFlight), Amount: tm.charged},
		}
		return p
	}
	p.Entries = []ledger.Entry{
		{Account: ledger.MerchantAccount(tn, tm.fromCur), Amount: -tm.from},
		{Account: ledger.SystemAccount(tn.Mode, tm.fromCur, ledger.FX), Amount: tm.from},
		{Account: ledger.SystemAccount(tn.Mode, tm.cur, ledger.FX), Amount: -tm.charged},
		{Account: ledger.SystemAccount(tn.Mode, tm.cur, ledger.PayoutsInFlight), Amount: tm.charged},
	}
	return p
}
