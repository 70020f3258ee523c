// Package swaps converts a merchant's balance from one currency to another
// with a swap quote (POST /transactions/swap, our addition to the published
// REST API). A swap takes from_amount off the merchant's available balance at
// once and shows to_amount as pending in to_currency; after the settlement
// delay (SWAP_SETTLEMENT_DELAY) a worker moves it to available and the swap
// becomes success. Each step is one database transaction with its ledger
// posting and its event (swap.pending, swap.success).
//
// Ledger: the creation posting gives the service's FX account from_amount in
// from_currency and takes to_amount + fee in to_currency from it, the fee
// going to the Fees account and to_amount to the merchant's pending bucket;
// settlement moves to_amount from pending to available. Both postings have
// ids derived from the swap's reference, so neither can be made twice.
package swaps

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"go.opentelemetry.io/otel/trace"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/events"
	"merchantpay/internal/ledger"
	"merchantpay/internal/merchants"
	"merchantpay/internal/money"
	"merchantpay/internal/rates"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/tracing"
	"merchantpay/internal/transactions"
	"merchantpay/internal/validate"
)

// Fixed values of a swap transaction.
const (
	Type        = "SWAP"
	PaymentSlug = "instant-swap"
	Destination = "main_balance"
	Channel     = "API"
	// Party: a swap moves money between two balances of the merchant itself.
	Party = "SELF"
	// FeeBearer: the quote's fee is taken from what the merchant receives.
	FeeBearer = "merchant"
	// ReferencePrefix starts every swap's service reference.
	ReferencePrefix = transactions.SwapPrefix
)

// Statuses of a swap. Once accepted a swap cannot fail: the FX account is
// the service's own, so settlement only releases the pending credit.
const (
	StatusPending = "pending"
	StatusSuccess = "success"
)

// DefaultSettlementDelay is SWAP_SETTLEMENT_DELAY's default.
const DefaultSettlementDelay = 30 * time.Minute

// maxRateReference bounds rate_reference; quote references are UUIDs.
const maxRateReference = 200

// Input is a swap request, shared by REST and GraphQL. Nil means the field
// was absent or null (or of the wrong type, already reported by the decoder).
type Input struct {
	RateReference *string
	Reference     *string
}

// Validate collects every bad field of in. Field names are the REST body's.
func Validate(in Input, f *apperr.Fields) {
	switch {
	case in.RateReference == nil:
		f.Add("rate_reference", "is required: the reference of a swap quote from POST /rates/create")
	case strings.TrimSpace(*in.RateReference) == "":
		f.Add("rate_reference", "must not be empty")
	case validate.Text(*in.RateReference) != "":
		f.Add("rate_reference", "%s", validate.Text(*in.RateReference))
	case len(*in.RateReference) > maxRateReference:
		f.Add("rate_reference", "must be at most %d characters", maxRateReference)
	}
	if in.Reference != nil {
		if msg := transactions.CheckMerchantReference(*in.Reference); msg != "" {
			f.Add("reference", "%s", msg)
		}
	}
}

// Config is the operator's swap settings.
type Config struct {
	// SettlementDelay is how long a swap stays pending
	// (SWAP_SETTLEMENT_DELAY); zero means DefaultSettlementDelay.
	SettlementDelay time.Duration
	// Tracer, when not nil, gives each settlement a span linked to the
	// request that made the swap.
	Tracer trace.Tracer
}

// Service performs and settles swaps.
type Service struct {
	db     *store.DB
	clock  clock.Clock
	rates  *rates.Service
	ledger *ledger.Service
	outbox *events.Outbox
	cfg    Config
}

// New returns the swaps service. rates must be built with the same
// SWAP_SETTLEMENT_DELAY, so that the settlement_time it shows on quotes and
// swaps is the delay applied here.
func New(db *store.DB, c clock.Clock, r *rates.Service, l *ledger.Service, o *events.Outbox, cfg Config) *Service {
	if cfg.SettlementDelay <= 0 {
		cfg.SettlementDelay = DefaultSettlementDelay
	}
	return &Service{db: db, clock: c, rates: r, ledger: l, outbox: o, cfg: cfg}
}

// Swap consumes the swap quote in.RateReference for the merchant and mode of
// ctx and books a pending SWAP transaction, in tx, the request's database
// transaction handed to it (with tx nil, in one of its own), which each step
// is handed as an argument: the quote's consumption, the transaction row, its
// swap.pending event and the ledger posting commit together or not at all,
// so a failed swap (INSUFFICIENT_BALANCE, DUPLICATE_REFERENCE) leaves the
// quote usable.
//
// Errors: VALIDATION_ERROR (every bad field); DUPLICATE_REFERENCE when
// in.Reference is already a transaction's merchant reference (ignoring
// case); Consume's NOT_FOUND, RATE_TYPE_MISMATCH, RATE_USED, RATE_EXPIRED;
// INSUFFICIENT_BALANCE when available from_currency is below from_amount.
func (s *Service) Swap(ctx context.Context, tx *ent.Tx, in Input) (*ent.Transaction, error) {
	var f apperr.Fields
	Validate(in, &f)
	if err := f.Err(); err != nil {
		return nil, err
	}
	tn, ok := tenant.From(ctx)
	if !ok {
		return nil, tenant.ErrNoTenant
	}
	ref := ReferencePrefix + uuid.NewString()
	var out *ent.Transaction
	err := s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		c := tx.Client()
		if in.Reference != nil {
			if err := transactions.CheckReference(ctx, c, *in.Reference); err != nil {
				return err
			}
		}
		q, err := s.rates.Consume(ctx, tx, *in.RateReference, rates.Swap, ref)
		if err != nil {
			return err
		}
		name, err := merchants.Name(ctx, c, tn.MerchantID)
		if err != nil {
			return err
		}
		t, err := s.insert(ctx, c, q, in.Reference, ref, name)
		if err != nil {
			return err
		}
		// The event before the posting: the posting's debit locks the
		// merchant's balance row, which is best held only until the commit.
		if err := s.outbox.Emit(ctx, tx, events.SwapPending, t); err != nil {
			return err
		}
		if err := s.book(ctx, tx, tn, t); err != nil {
			return err
		}
		out = t
		return nil
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return out, nil
}

// insert writes the pending swap for quote q through c, the client of the
// swap's transaction. Amounts: amount and to_amount
// are the quote's to_amount, fee its fee (both in to_currency), and, as for a
// cross withdrawal, amount_charged = amount + fee and amount_settled = amount.
func (s *Service) insert(ctx context.Context, c *ent.Client, q *ent.Quote, merchantRef *string, ref, merchantName string) (*ent.Transaction, error) {
	id, err := uuid.NewV7() // time-ordered: lists keep creation order within a millisecond
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	from, to := money.Currency(q.FromCurrency), money.Currency(q.ToCurrency)
	narration := fmt.Sprintf("Swap %s %s to %s %s", money.Format(q.FromAmount, from), from, money.Format(q.ToAmount, to), to)
	create := c.Transaction.Create().SetID(id.String()).SetReference(ref).
		SetType(Type).SetPurpose(Type).SetStatus(StatusPending).
		SetFromAmount(q.FromAmount).SetFromCurrency(q.FromCurrency).
		SetAmount(q.ToAmount).SetCurrency(q.ToCurrency).
		SetToAmount(q.ToAmount).SetToCurrency(q.ToCurrency).
		SetAmountCharged(q.ToAmount + q.Fee).SetAmountSettled(q.ToAmount).
		SetFee(q.Fee).SetFeeCurrency(q.ToCurrency).
		SetTrxRate(q.Rate).SetRateID(q.ID).
		SetFromParty(Party).SetToParty(Party).SetChannel(Channel).SetNarration(narration).
		SetFeeBearer(FeeBearer).SetDestination(Destination).SetPaymentSlug(PaymentSlug).
		SetFromMerchant(merchantName).
		SetNextRunAt(now.Add(s.cfg.SettlementDelay)).
		SetCreatedAt(now).SetUpdatedAt(now)
	create.SetNillableTraceParent(tracing.ParentOf(ctx))
	if m := s.rates.SettlementMinutes(q); m != nil {
		create.SetSettlementTime(m.String())
	}
	if merchantRef != nil {
		create.SetMerchantReference(*merchantRef).SetMerchantReferenceKey(transactions.ReferenceKey(*merchantRef))
	}
	t, err := create.Save(ctx)
	if store.IsUniqueViolation(err) && merchantRef != nil {
		return nil, transactions.DuplicateReference(*merchantRef) // claimed by a concurrent transaction
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// book posts the swap's creation in tx: the debit of from_amount (last, as
// the ledger orders it) and the pending credit of to_amount.
func (s *Service) book(ctx context.Context, tx *ent.Tx, tn tenant.Tenant, t *ent.Transaction) error {
	from, to := money.Currency(t.FromCurrency), money.Currency(*t.ToCurrency)
	entries := []ledger.Entry{
		{Account: ledger.MerchantAccount(tn, from), Bucket: ledger.Available, Amount: -t.FromAmount},
		{Account: ledger.SystemAccount(tn.Mode, from, ledger.FX), Amount: t.FromAmount},
		{Account: ledger.SystemAccount(tn.Mode, to, ledger.FX), Amount: -(*t.ToAmount + t.Fee)},
		{Account: ledger.MerchantAccount(tn, to), Bucket: ledger.Pending, Amount: *t.ToAmount},
	}
	if t.Fee > 0 {
		entries = append(entries, ledger.Entry{Account: ledger.SystemAccount(tn.Mode, to, ledger.Fees), Amount: t.Fee})
	}
	_, err := s.ledger.Post(ctx, tx, ledger.Posting{ID: t.Reference + ":swap", TransactionRef: t.Reference,
		Memo: t.Narration, Entries: entries})
	return err
}
