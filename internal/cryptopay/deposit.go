package cryptopay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/events"
	"merchantpay/internal/merchants"
	"merchantpay/internal/money"
	"merchantpay/internal/rates"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/tracing"
	"merchantpay/internal/transactions"
)

// Links is the spec's "Crypto-pay deposit links" object, field for field.
type Links struct {
	PrepayID           string  `json:"prepayId"`
	TerminalType       string  `json:"terminalType"`
	ExpireTime         int64   `json:"expireTime"`
	QRCodeLink         string  `json:"qrcodeLink"`
	QRContent          string  `json:"qrContent"`
	CheckoutURL        string  `json:"checkoutUrl"`
	Deeplink           string  `json:"deeplink"`
	UniversalURL       string  `json:"universalUrl"`
	ProductName        string  `json:"product_name"`
	ProductDescription string  `json:"product_description"`
	FailureURL         string  `json:"failure_url"`
	SuccessURL         string  `json:"success_url"`
	MerchantReference  string  `json:"merchant_reference"`
	FromMerchant       *string `json:"from_merchant"`
	ToMerchant         *string `json:"to_merchant"`
}

// stored is what a transaction's links column holds: the links, and the
// checkout's snapshot of the enrolment's business name.
type stored struct {
	Links
	BusinessName string `json:"business_name"`
}

func (st stored) toMap() (map[string]any, error) {
	raw, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(raw, &m)
}

func storedOf(t *ent.Transaction) (stored, error) {
	var st stored
	raw, err := json.Marshal(t.Links)
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(raw, &st)
}

// LinksOf returns the links a deposit start answered with.
func LinksOf(t *ent.Transaction) (Links, error) {
	st, err := storedOf(t)
	return st.Links, err
}

// Deposit is a started crypto-pay deposit.
type Deposit struct {
	Transaction *ent.Transaction
	Links       Links
}

// newPrepayID is the checkout's id, also its only credential on the hosted
// page: 128 random bits.
func newPrepayID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// validPrepayID accepts what newPrepayID makes, so junk never reaches the
// database.
func validPrepayID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !(id[i] >= '0' && id[i] <= '9' || id[i] >= 'a' && id[i] <= 'f') {
			return false
		}
	}
	return true
}

// CheckoutURL is the hosted checkout page of a prepay id.
func (s *Service) CheckoutURL(prepayID string) string {
	return s.cfg.PublicBaseURL + "/checkout/" + prepayID
}

// StartDeposit starts a crypto-pay deposit for the merchant and mode of ctx,
// in one database transaction (joining the one in ctx, if any): a cross
// deposit's quote is consumed, the pending DEPOSIT transaction is inserted
// with its checkout (prepay_id, links, expires_at, and next_run_at for the
// expiry worker), and deposit.pending (direct) or swap.pending (cross) is
// emitted. Nothing is credited until the checkout is paid.
//
// Errors, in this order: LIVE_MODE_ONLY, NOT_ENROLLED, VALIDATION_ERROR
// (every bad field), DUPLICATE_REFERENCE, the quote's NOT_FOUND,
// RATE_TYPE_MISMATCH (also for a deposit quote without deposit_method
// crypto-pay), RATE_USED and RATE_EXPIRED, AMOUNT_TOO_SMALL when the fee
// leaves nothing to credit.
//
// A sandbox deposit runs in tx, the request's transaction handed to it, or,
// when tx is nil (tests), in one of its own; a live one, whose provider
// call must not run inside a transaction, needs tx nil and opens its own.
func (s *Service) StartDeposit(ctx context.Context, tx *ent.Tx, in DepositInput) (*Deposit, error) {
	tn, err := liveTenant(ctx)
	if err != nil {
		return nil, err
	}
	prov, err := s.liveProvider(tn)
	if err != nil {
		return nil, err
	}
	if prov != nil {
		return s.startLive(ctx, tx, tn, in, prov)
	}
	var out *Deposit
	err = s.db.Within(ctx, tx, func(ctx context.Context, tx *ent.Tx) error {
		ref := ReferencePrefix + uuid.NewString()
		enr, row, err := s.price(ctx, tx, in, ref)
		if err != nil {
			return err
		}
		name, err := merchants.Name(ctx, tx.Client(), tn.MerchantID)
		if err != nil {
			return err
		}
		out, err = s.insert(ctx, tx.Client(), in, enr, row, ref, name, nil)
		if err != nil {
			return err
		}
		return s.emitStarted(ctx, tx, in, out.Transaction)
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return out, nil
}

// price checks a deposit start in tx, the caller's transaction (the
// enrolment, every field, the merchant reference) and prices it, consuming
// a cross deposit's quote.
func (s *Service) price(ctx context.Context, tx *ent.Tx, in DepositInput, ref string) (*ent.CryptoPayEnrolment, amountRow, error) {
	enr, err := enrolmentIn(ctx, tx.Client())
	if err != nil {
		return nil, amountRow{}, err
	}
	var f apperr.Fields
	ValidateDeposit(in, &f)
	if err := f.Err(); err != nil {
		return nil, amountRow{}, err
	}
	if in.Reference != nil {
		if err := transactions.CheckReference(ctx, tx.Client(), *in.Reference); err != nil {
			return nil, amountRow{}, err
		}
	}
	row, err := s.amounts(ctx, tx, in, ref)
	return enr, row, err
}

// emitStarted emits deposit.pending (direct) or swap.pending (cross) in tx.
func (s *Service) emitStarted(ctx context.Context, tx *ent.Tx, in DepositInput, t *ent.Transaction) error {
	typ := events.DepositPending
	if in.Cross() {
		typ = events.SwapPending
	}
	return s.outbox.Emit(ctx, tx, typ, t)
}

// amountRow is a deposit's money, in minor units.
type amountRow struct {
	fromAmount            int64
	fromCurrency          money.Currency
	amount                int64
	currency              money.Currency
	charged, settled, fee int64
	toAmount              *int64
	toCurrency            *string
	rate                  *decimal.Decimal
	rateID                *string
}

// amounts prices the deposit. Direct: the crypto-pay fee is taken from what
// the merchant receives (fee_bearer merchant: amount_charged = amount,
// amount_settled = amount − fee) or added to what the payer pays
// (beneficiary: amount_charged = amount + fee, amount_settled = amount); the
// payer pays amount_charged. Cross: the payer pays the quote's from_amount
// in from_currency and the merchant is credited its to_amount; the quote's
// fee is the only fee, whatever fee_bearer says (as for cross withdrawals),
// with amount_charged = to_amount + fee.
func (s *Service) amounts(ctx context.Context, tx *ent.Tx, in DepositInput, ref string) (amountRow, error) {
	if in.Cross() {
		q, err := s.rates.Consume(ctx, tx, *in.RateReference, rates.Deposit, ref)
		if err != nil {
			return amountRow{}, err
		}
		if q.DepositMethod == nil || *q.DepositMethod != Method {
			// Returning the error rolls the consumption back.
			return amountRow{}, apperr.New(apperr.RateTypeMismatch,
				"the rate %s is a deposit quote without deposit_method crypto-pay; create one with transaction_type deposit and deposit_method crypto-pay",
				q.ID)
		}
		var f apperr.Fields
		rates.CheckBeside(q, in.Amount, in.Currency, &f)
		if err := f.Err(); err != nil {
			return amountRow{}, err
		}
		to := q.ToCurrency
		rate, id := q.Rate, q.ID
		return amountRow{
			fromAmount: q.FromAmount, fromCurrency: money.Currency(q.FromCurrency),
			amount: q.ToAmount, currency: money.Currency(q.ToCurrency),
			charged: q.ToAmount + q.Fee, settled: q.ToAmount, fee: q.Fee,
			toAmount: &q.ToAmount, toCurrency: &to, rate: &rate, rateID: &id,
		}, nil
	}
	cur := money.Currency(*in.Currency)
	amount, err := money.ToMinor(*in.Amount, cur)
	if err != nil {
		return amountRow{}, err // unreachable after validation
	}
	fee, err := s.cfg.Fee.On(amount, cur)
	if err != nil {
		return amountRow{}, err
	}
	r := amountRow{amount: amount, currency: cur, fee: fee, charged: amount, settled: amount - fee}
	if bearer(in) == BearerBeneficiary {
		r.charged, r.settled = amount+fee, amount
	}
	if r.settled <= 0 {
		return amountRow{}, apperr.New(apperr.AmountTooSmall,
			"the amount %s %s does not cover the crypto-pay fee of %s %s; send a larger amount",
			money.Format(amount, cur), cur, money.Format(fee, cur), cur)
	}
	if r.charged > money.MaxMinor(cur) {
		return amountRow{}, &apperr.Error{Kind: apperr.Validation, Message: "the amount plus the fee is too large",
			Fields: []apperr.FieldError{{Field: "amount", Message: "is too large once the fee is added"}}}
	}
	r.fromAmount, r.fromCurrency = r.charged, cur
	return r, nil
}

func bearer(in DepositInput) string {
	if in.FeeBearer == nil {
		return BearerMerchant
	}
	return *in.FeeBearer
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// insert writes the pending deposit and its checkout: the sandbox's hosted
// page, or live's provider checkout when live is not nil, with c, the
// client of the caller's transaction.
func (s *Service) insert(ctx context.Context, c *ent.Client, in DepositInput, enr *ent.CryptoPayEnrolment, r amountRow,
	ref, merchantName string, live *liveOrder) (*Deposit, error) {
	id, err := uuid.NewV7() // time-ordered: lists keep creation order within a millisecond
	if err != nil {
		return nil, err
	}
	prepay, err := newPrepayID()
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	expires := now.Add(s.cfg.Lifetime)
	checkout := s.CheckoutURL(prepay)
	qrLink, qrContent, deeplink, universal := checkout+"/qr.png", checkout, checkout, checkout
	if live != nil {
		o := live.created
		prepay, checkout, qrLink, qrContent, deeplink, universal = o.ProviderReference, o.CheckoutURL, o.QRCodeLink, o.QRContent, o.Deeplink, o.UniversalURL
		if !o.ExpiresAt.IsZero() {
			expires = o.ExpiresAt.UTC().Truncate(time.Millisecond)
		}
	}
	links := Links{
		PrepayID: prepay, TerminalType: TerminalType, ExpireTime: expires.UnixMilli(),
		QRCodeLink: qrLink, QRContent: qrContent,
		CheckoutURL: checkout, Deeplink: deeplink, UniversalURL: universal,
		ProductName: *in.ProductName, ProductDescription: deref(in.ProductDescription),
		SuccessURL: enr.SuccessURL, FailureURL: enr.FailureURL,
		// The links carry no service reference: without a merchant
		// reference, the service's stands in, so GET /transactions/{ref}
		// always finds the deposit.
		MerchantReference: ref,
	}
	if in.SuccessURL != nil {
		links.SuccessURL = *in.SuccessURL
	}
	if in.FailureURL != nil {
		links.FailureURL = *in.FailureURL
	}
	if in.Reference != nil {
		links.MerchantReference = *in.Reference
	}
	m, err := stored{Links: links, BusinessName: enr.BusinessName}.toMap()
	if err != nil {
		return nil, err
	}
	create := c.Transaction.Create().SetID(id.String()).SetReference(ref).
		SetType(Type).SetPurpose(Type).SetStatus(StatusPending).
		SetFromAmount(r.fromAmount).SetFromCurrency(string(r.fromCurrency)).
		SetAmount(r.amount).SetCurrency(string(r.currency)).
		SetAmountCharged(r.charged).SetAmountSettled(r.settled).SetFee(r.fee).SetFeeCurrency(string(r.currency)).
		SetNillableToAmount(r.toAmount).SetNillableToCurrency(r.toCurrency).
		SetNillableTrxRate(r.rate).SetNillableRateID(r.rateID).
		SetFromParty(FromParty).SetToParty(ToParty).SetChannel(Channel).SetNarration(*in.ProductName).
		SetFeeBearer(bearer(in)).SetDestination(Destination).SetPaymentSlug(PaymentSlug).
		SetFromMerchant(merchantName).
		SetPrepayID(prepay).SetLinks(m).SetExpiresAt(expires).SetNextRunAt(expires).
		SetCreatedAt(now).SetUpdatedAt(now)
	create.SetNillableTraceParent(tracing.ParentOf(ctx))
	if live != nil {
		tradeNo := live.created.TradeNo
		if tradeNo == "" && s.router != nil {
			tradeNo = s.router.ProviderReference(live.provider, ref)
		}
		create.SetProvider(live.provider).SetProviderReference(tradeNo)
	}
	if in.Reference != nil {
		create.SetMerchantReference(*in.Reference).SetMerchantReferenceKey(transactions.ReferenceKey(*in.Reference))
	}
	t, err := create.Save(ctx)
	if store.IsUniqueViolation(err) && in.Reference != nil {
		return nil, transactions.DuplicateReference(*in.Reference)
	}
	if err != nil {
		return nil, err
	}
	return &Deposit{Transaction: t, Links: links}, nil
}

// tenantOf is the owner of t.
func tenantOf(t *ent.Transaction) tenant.Tenant {
	return tenant.Tenant{MerchantID: t.MerchantID, Mode: t.Mode}
}

// expired reports whether t's checkout has expired at now.
func expired(t *ent.Transaction, now time.Time) bool {
	return t.ExpiresAt != nil && !now.Before(*t.ExpiresAt)
}
