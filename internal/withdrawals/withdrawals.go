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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

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
	"merchantpay/internal/rates"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/tracing"
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
	ReferencePrefix = "WTH-"
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
	// railCheck, when set, refuses a payout whose mode and country have no
	// rails (RAIL_NOT_CONFIGURED); see CheckRailsWith.
	railCheck func(mode, country string) error
}

// CheckRailsWith makes Withdraw refuse, before it changes anything, a
// payout check refuses (a live payout to a country whose provider is not
// configured).
func (s *Service) CheckRailsWith(check func(mode, country string) error) { s.railCheck = check }

// New returns the withdrawals service.
func New(db *store.DB, c clock.Clock, l *ledger.Service, r *rates.Service, dir *banks.Directory, o *events.Outbox, fees FeeTable) *Service {
	return &Service{db: db, clock: c, ledger: l, rates: r, banks: dir, outbox: o, fees: fees, waker: jobs.NewWaker()}
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

// Withdraw accepts a withdrawal for the merchant and mode of ctx, in one
// database transaction (joining the one in ctx, if any): the quote's
// consumption (cross), the pending transaction, its withdrawal.pending event
// and, last, the debit of the merchant's balance commit together or not at
// all. The payout worker of this instance is woken after the commit; any
// instance's worker would find it anyway (next_run_at is now).
//
// Errors: VALIDATION_ERROR (every bad field); UNKNOWN_BANK, UNKNOWN_BRANCH;
// AMOUNT_TOO_SMALL when the beneficiary's fee leaves nothing to pay;
// Consume's NOT_FOUND, RATE_TYPE_MISMATCH, RATE_USED, RATE_EXPIRED;
// DUPLICATE_REFERENCE; INSUFFICIENT_BALANCE, with nothing written.
func (s *Service) Withdraw(ctx context.Context, in Input) (*ent.Transaction, error) {
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
	err := s.db.Tx(ctx, func(ctx context.Context) error {
		if in.cross() {
			q, err := s.rates.Consume(ctx, *in.RateReference, rates.Withdrawal, ref)
			if err != nil {
				return err
			}
			if err := s.checkQuote(q, in); err != nil {
				return err // rolls the consumption back
			}
			tm = crossTerms(q)
		}
		if s.railCheck != nil {
			if err := s.railCheck(tn.Mode, countryOf(tm.cur)); err != nil {
				return err // rolls a consumed quote back
			}
		}
		name, err := merchants.Name(ctx, s.db.Client(ctx), tn.MerchantID)
		if err != nil {
			return err
		}
		t, err := s.insert(ctx, in, tm, ref, name)
		if err != nil {
			return err
		}
		// Nothing reads the event here: it goes with the debit where it can.
		if err := s.outbox.EmitLater(ctx, events.WithdrawalPending, t); err != nil {
			return err
		}
		// Last: the debit locks the merchant's balance row until the
		// commit. A keyed request's transaction puts it off further, after
		// its stored answer (store.Last; a refusal then runs the request
		// again without that, and answers the refusal).
		if err := store.Last(ctx, func(ctx context.Context) error { return s.debit(ctx, tn, t, tm) }); err != nil {
			return err
		}
		store.AfterCommit(ctx, s.waker.Wake)
		out = t
		return nil
	})
	if err != nil {
		return nil, store.Classify(err)
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

// beneficiaryJSON is the beneficiary as the Transaction shows it: a JSON
// string of the fields of its country's shape that were sent, in the spec's
// order.
type beneficiaryJSON struct {
	Email         string  `json:"email"`
	Phone         *string `json:"phone,omitempty"`
	Country       *string `json:"country,omitempty"`
	Bank          string  `json:"bank"`
	Branch        *string `json:"branch,omitempty"`
	AccountName   string  `json:"account_name"`
	AccountNumber string  `json:"account_number"`
	AccountType   *string `json:"account_type,omitempty"`
}

func beneficiaryString(b Beneficiary, country string) (string, error) {
	v := beneficiaryJSON{Email: *b.Email, Phone: b.Phone, Bank: *b.Bank, AccountName: *b.AccountName, AccountNumber: *b.AccountNumber}
	if country == banks.CountryGH {
		v.Country, v.Branch, v.AccountType = b.Country, b.Branch, b.AccountType
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// insert writes the pending withdrawal; next_run_at now hands it to the
// payout worker. A taken merchant reference surfaces from the unique index
// (no read first: this is the hottest path). The row's INSERT is a prelude
// of the transaction (store.Prelude): a keyed request's debit carries it
// in its own round trip on PostgreSQL, after which a taken reference fails
// the put-off statements and the request runs again inline, meeting it
// here.
func (s *Service) insert(ctx context.Context, in Input, tm terms, ref, merchantName string) (*ent.Transaction, error) {
	id, err := uuid.NewV7() // time-ordered: lists keep creation order within a millisecond
	if err != nil {
		return nil, err
	}
	ben, err := beneficiaryString(*in.Beneficiary, countryOf(tm.cur))
	if err != nil {
		return nil, err
	}
	narration := ""
	if in.Narration != nil {
		narration = *in.Narration
	}
	now := s.clock.Now()
	var t *ent.Transaction
	st, err := s.db.Capture(ctx, func(ctx context.Context, c *ent.Client) error {
		create := c.Transaction.Create().SetID(id.String()).SetReference(ref).
			SetType(Type).SetPurpose(Type).SetStatus(StatusPending).
			SetFromAmount(tm.from).SetFromCurrency(string(tm.fromCur)).
			SetAmount(tm.amount).SetCurrency(string(tm.cur)).
			SetAmountCharged(tm.charged).SetAmountSettled(tm.settled).
			SetFee(tm.fee).SetFeeCurrency(string(tm.cur)).
			SetFromParty(FromParty).SetToParty(ToParty).SetChannel(Channel).SetNarration(narration).
			SetBeneficiary(ben).SetFeeBearer(feeBearer(in)).SetDestination(Destination).SetPaymentSlug(PaymentSlug).
			SetFromMerchant(merchantName).
			// settled_at is when the merchant's balance was charged; success
			// moves it to when the beneficiary was paid.
			SetSettledAt(now).
			SetNextRunAt(now).
			SetCreatedAt(now).SetUpdatedAt(now)
		create.SetNillableTraceParent(tracing.ParentOf(ctx))
		if q := tm.quote; q != nil {
			create.SetToAmount(q.ToAmount).SetToCurrency(q.ToCurrency).SetTrxRate(q.Rate).SetRateID(q.ID)
		}
		if in.Reference != nil {
			create.SetMerchantReference(*in.Reference).SetMerchantReferenceKey(transactions.ReferenceKey(*in.Reference))
		}
		var err error
		t, err = create.Save(ctx)
		return err
	})
	if err == nil {
		err = store.Prelude(ctx, st)
	}
	if in.Reference != nil && store.IsUniqueViolation(err) {
		return nil, transactions.DuplicateReference(*in.Reference)
	}
	if err != nil {
		return nil, store.Classify(fmt.Errorf("withdrawals: insert: %w", err))
	}
	return t, nil
}

// debit posts the acceptance: amount_charged leaves the merchant's available
// balance for PayoutsInFlight. A cross withdrawal debits the quote's
// from_amount in from_currency, converted through FX. It is the last
// balance change of Withdraw's transaction (Posting.Last: it may take the
// amount from one of the balance's slots).
func (s *Service) debit(ctx context.Context, tn tenant.Tenant, t *ent.Transaction, tm terms) error {
	p := ledger.Posting{ID: DebitPostingID(t.Reference), TransactionRef: t.Reference, Memo: "withdrawal " + t.Reference, Last: true}
	if tm.quote == nil {
		_, err := s.ledger.Debit(ctx, p, tn, ledger.PayoutsInFlight, tm.cur, tm.charged)
		return err
	}
	p.Entries = []ledger.Entry{
		{Account: ledger.MerchantAccount(tn, tm.fromCur), Amount: -tm.from},
		{Account: ledger.SystemAccount(tn.Mode, tm.fromCur, ledger.FX), Amount: tm.from},
		{Account: ledger.SystemAccount(tn.Mode, tm.cur, ledger.FX), Amount: -tm.charged},
		{Account: ledger.SystemAccount(tn.Mode, tm.cur, ledger.PayoutsInFlight), Amount: tm.charged},
	}
	_, err := s.ledger.Post(ctx, p)
	return err
}
