package withdrawals

// This file builds a withdrawal's row in Go, as Withdraw will store it, and
// its INSERT, which Withdraw hands to ledger.Service.Payout to send.

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/banks"
	"merchantpay/internal/store"
	"merchantpay/internal/tenant"
	"merchantpay/internal/tracing"
	"merchantpay/internal/transactions"
)

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

// row is the pending withdrawal as it will be stored: next_run_at now
// hands it to the payout worker. Nothing is sent (see rowInsert).
func (s *Service) row(ctx context.Context, tn tenant.Tenant, in Input, tm terms, ref, merchantName string) (*ent.Transaction, error) {
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
	t := &ent.Transaction{ID: id.String(), MerchantID: tn.MerchantID, Mode: tn.Mode, CreatedAt: now, UpdatedAt: now,
		Reference: ref, Type: Type, Purpose: Type, Status: StatusPending,
		FromAmount: tm.from, FromCurrency: string(tm.fromCur), Amount: tm.amount, Currency: string(tm.cur),
		AmountCharged: tm.charged, AmountSettled: tm.settled, Fee: tm.fee, FeeCurrency: string(tm.cur),
		FromParty: FromParty, ToParty: ToParty, Channel: Channel, Narration: narration, Beneficiary: &ben,
		FeeBearer: feeBearer(in), Destination: Destination, PaymentSlug: PaymentSlug, FromMerchant: merchantName,
		// settled_at is when the merchant's balance was charged; success
		// moves it to when the beneficiary was paid.
		SettledAt: &now, NextRunAt: &now, TraceParent: tracing.ParentOf(ctx)}
	if q := tm.quote; q != nil {
		rate := q.Rate
		t.ToAmount, t.ToCurrency, t.TrxRate, t.RateID = &q.ToAmount, &q.ToCurrency, &rate, &q.ID
	}
	if in.Reference != nil {
		key := transactions.ReferenceKey(*in.Reference)
		t.MerchantReference, t.MerchantReferenceKey = in.Reference, &key
	}
	return t, nil
}

// rowInsert is the INSERT of t, a withdrawal built by row, in one
// statement: every column a withdrawal sets; the others take their
// defaults. A taken merchant reference is refused by the unique index.
func rowInsert(dialect string, t *ent.Transaction) store.Stmt {
	orNull := func(v any, set bool) any {
		if !set {
			return nil
		}
		return v
	}
	var trxRate any
	if t.TrxRate != nil {
		trxRate = t.TrxRate.String()
	}
	query, args := entsql.Dialect(dialect).Insert(transaction.Table).
		Columns(transaction.FieldID, transaction.FieldMerchantID, transaction.FieldMode,
			transaction.FieldCreatedAt, transaction.FieldUpdatedAt, transaction.FieldReference,
			transaction.FieldMerchantReference, transaction.FieldMerchantReferenceKey, transaction.FieldType,
			transaction.FieldPurpose, transaction.FieldStatus, transaction.FieldFromAmount, transaction.FieldFromCurrency,
			transaction.FieldAmount, transaction.FieldCurrency, transaction.FieldAmountCharged, transaction.FieldAmountSettled,
			transaction.FieldToAmount, transaction.FieldToCurrency, transaction.FieldFee, transaction.FieldFeeCurrency,
			transaction.FieldTrxRate, transaction.FieldRateID, transaction.FieldFromParty, transaction.FieldToParty,
			transaction.FieldChannel, transaction.FieldNarration, transaction.FieldBeneficiary, transaction.FieldFeeBearer,
			transaction.FieldDestination, transaction.FieldPaymentSlug, transaction.FieldFromMerchant,
			transaction.FieldSettledAt, transaction.FieldNextRunAt, transaction.FieldAttempts, transaction.FieldTraceParent).
		Values(t.ID, t.MerchantID, t.Mode,
			t.CreatedAt, t.UpdatedAt, t.Reference,
			orNull(deref(t.MerchantReference), t.MerchantReference != nil), orNull(deref(t.MerchantReferenceKey), t.MerchantReferenceKey != nil), t.Type,
			t.Purpose, t.Status, t.FromAmount, t.FromCurrency,
			t.Amount, t.Currency, t.AmountCharged, t.AmountSettled,
			orNull(derefInt(t.ToAmount), t.ToAmount != nil), orNull(deref(t.ToCurrency), t.ToCurrency != nil), t.Fee, t.FeeCurrency,
			trxRate, orNull(deref(t.RateID), t.RateID != nil), t.FromParty, t.ToParty,
			t.Channel, t.Narration, deref(t.Beneficiary), t.FeeBearer,
			t.Destination, t.PaymentSlug, t.FromMerchant,
			*t.SettledAt, *t.NextRunAt, t.Attempts, orNull(deref(t.TraceParent), t.TraceParent != nil)).
		Query()
	return store.Stmt{SQL: query, Args: args, Rows: 1}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func derefInt(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
