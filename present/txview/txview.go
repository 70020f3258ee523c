// Package txview renders a Transaction exactly as the spec lists it. REST
// answers, webhook bodies and subscription events all use this one shape, so
// a webhook's data equals what GET /transactions/{ref} shows. It is
// presentation, so it lives outside internal/; it is not rest's either,
// because the outbox (internal/events) stores it as every event's payload
// and the transactions service reads rows straight into it, and neither may
// import a transport.
package txview

import (
	"database/sql"
	"encoding/json"

	"merchantpay/ent"
	"merchantpay/ent/transaction"
	"merchantpay/internal/money"
	"merchantpay/present/jsonx"
)

// Transaction is the spec's Transaction, field for field.
type Transaction struct {
	Reference         string     `json:"reference"`
	MerchantReference *string    `json:"merchant_reference"`
	Type              string     `json:"type"`
	Purpose           string     `json:"purpose"`
	Status            string     `json:"status"`
	FromAmount        jsonx.Num  `json:"from_amount"`
	Amount            jsonx.Num  `json:"amount"`
	AmountCharged     jsonx.Num  `json:"amount_charged"`
	AmountSettled     jsonx.Num  `json:"amount_settled"`
	Currency          string     `json:"currency"`
	FromCurrency      string     `json:"from_currency"`
	ToAmount          *jsonx.Num `json:"to_amount"`
	ToCurrency        *string    `json:"to_currency"`
	TrxRate           *jsonx.Num `json:"trx_rate"`
	RateID            *string    `json:"rateId"`
	From              string     `json:"from"`
	To                string     `json:"to"`
	Channel           string     `json:"channel"`
	Narration         string     `json:"narration"`
	Beneficiary       *string    `json:"beneficiary"`
	FeeBearer         string     `json:"fee_bearer"`
	Fee               jsonx.Num  `json:"fee"`
	Destination       string     `json:"destination"`
	PaymentSlug       string     `json:"payment_slug"`
	FromMerchant      string     `json:"from_merchant"`
	ToMerchant        *string    `json:"to_merchant"`
	SettledAt         *string    `json:"settled_at"`
	SettlementTime    *string    `json:"settlement_time"`
	SettlementDate    *string    `json:"settlement_date"`
	RejectReason      *string    `json:"reject_reason"`
	TraceID           *string    `json:"trace_id"`
	PaymentProof      *string    `json:"payment_proof"`
	// A deposit to an account carries both; wallet_reference
	// is null for the merchant's own accounts, which belong to no wallet.
	// Other transactions carry neither.
	WalletReference  WalletRef `json:"wallet_reference,omitzero"`
	AccountReference *string   `json:"account_reference,omitempty"`
	CreatedAt        string    `json:"created_at"`
	UpdatedAt        string    `json:"updated_at"`
}

func amount(m int64, cur string) jsonx.Num {
	return jsonx.Num(money.FromMinor(m, money.Currency(cur)))
}

// View renders t.
func View(t *ent.Transaction) Transaction {
	feeCur := t.FeeCurrency
	if feeCur == "" {
		feeCur = t.Currency
	}
	v := Transaction{
		Reference:         t.Reference,
		MerchantReference: t.MerchantReference,
		Type:              t.Type,
		Purpose:           t.Purpose,
		Status:            t.Status,
		FromAmount:        amount(t.FromAmount, t.FromCurrency),
		Amount:            amount(t.Amount, t.Currency),
		AmountCharged:     amount(t.AmountCharged, t.Currency),
		AmountSettled:     amount(t.AmountSettled, t.Currency),
		Currency:          t.Currency,
		FromCurrency:      t.FromCurrency,
		ToCurrency:        t.ToCurrency,
		TrxRate:           jsonx.NumPtr(t.TrxRate),
		RateID:            t.RateID,
		From:              t.FromParty,
		To:                t.ToParty,
		Channel:           t.Channel,
		Narration:         t.Narration,
		Beneficiary:       t.Beneficiary,
		FeeBearer:         t.FeeBearer,
		Fee:               amount(t.Fee, feeCur),
		Destination:       t.Destination,
		PaymentSlug:       t.PaymentSlug,
		FromMerchant:      t.FromMerchant,
		ToMerchant:        t.ToMerchant,
		SettledAt:         jsonx.TimePtr(t.SettledAt),
		SettlementTime:    t.SettlementTime,
		SettlementDate:    jsonx.TimePtr(t.SettlementDate),
		RejectReason:      t.RejectReason,
		TraceID:           t.TraceID,
		PaymentProof:      t.PaymentProof,
		WalletReference: WalletRef{Present: t.WalletReference != nil || t.AccountReference != nil,
			Value: t.WalletReference},
		AccountReference: t.AccountReference,
		CreatedAt:        jsonx.Time(t.CreatedAt),
		UpdatedAt:        jsonx.Time(t.UpdatedAt),
	}
	if t.ToAmount != nil && t.ToCurrency != nil {
		n := amount(*t.ToAmount, *t.ToCurrency)
		v.ToAmount = &n
	}
	return v
}

// A column is one transactions column the shape is made of, and the field of
// the entity a row's value of it is scanned into.
type column struct {
	name  string
	field func(t *ent.Transaction) any
}

// columns are exactly the columns View reads, so that a look-up made only to
// render a transaction selects and scans these instead of all of the
// entity's, through a statement written once (ent builds and quotes its
// SELECT of every column anew on each query). TestColumnsCoverView fails
// when View reads a field missing here.
var columns = [...]column{
	{transaction.FieldReference, func(t *ent.Transaction) any { return &t.Reference }},
	{transaction.FieldMerchantReference, func(t *ent.Transaction) any { return &t.MerchantReference }},
	{transaction.FieldType, func(t *ent.Transaction) any { return &t.Type }},
	{transaction.FieldPurpose, func(t *ent.Transaction) any { return &t.Purpose }},
	{transaction.FieldStatus, func(t *ent.Transaction) any { return &t.Status }},
	{transaction.FieldFromAmount, func(t *ent.Transaction) any { return &t.FromAmount }},
	{transaction.FieldFromCurrency, func(t *ent.Transaction) any { return &t.FromCurrency }},
	{transaction.FieldAmount, func(t *ent.Transaction) any { return &t.Amount }},
	{transaction.FieldCurrency, func(t *ent.Transaction) any { return &t.Currency }},
	{transaction.FieldAmountCharged, func(t *ent.Transaction) any { return &t.AmountCharged }},
	{transaction.FieldAmountSettled, func(t *ent.Transaction) any { return &t.AmountSettled }},
	{transaction.FieldToAmount, func(t *ent.Transaction) any { return &t.ToAmount }},
	{transaction.FieldToCurrency, func(t *ent.Transaction) any { return &t.ToCurrency }},
	{transaction.FieldFee, func(t *ent.Transaction) any { return &t.Fee }},
	{transaction.FieldFeeCurrency, func(t *ent.Transaction) any { return nullAsEmpty{&t.FeeCurrency} }},
	{transaction.FieldTrxRate, func(t *ent.Transaction) any { return &t.TrxRate }},
	{transaction.FieldRateID, func(t *ent.Transaction) any { return &t.RateID }},
	{transaction.FieldFromParty, func(t *ent.Transaction) any { return &t.FromParty }},
	{transaction.FieldToParty, func(t *ent.Transaction) any { return &t.ToParty }},
	{transaction.FieldChannel, func(t *ent.Transaction) any { return &t.Channel }},
	{transaction.FieldNarration, func(t *ent.Transaction) any { return &t.Narration }},
	{transaction.FieldBeneficiary, func(t *ent.Transaction) any { return &t.Beneficiary }},
	{transaction.FieldFeeBearer, func(t *ent.Transaction) any { return &t.FeeBearer }},
	{transaction.FieldDestination, func(t *ent.Transaction) any { return &t.Destination }},
	{transaction.FieldPaymentSlug, func(t *ent.Transaction) any { return &t.PaymentSlug }},
	{transaction.FieldFromMerchant, func(t *ent.Transaction) any { return &t.FromMerchant }},
	{transaction.FieldToMerchant, func(t *ent.Transaction) any { return &t.ToMerchant }},
	{transaction.FieldSettledAt, func(t *ent.Transaction) any { return &t.SettledAt }},
	{transaction.FieldSettlementTime, func(t *ent.Transaction) any { return &t.SettlementTime }},
	{transaction.FieldSettlementDate, func(t *ent.Transaction) any { return &t.SettlementDate }},
	{transaction.FieldRejectReason, func(t *ent.Transaction) any { return &t.RejectReason }},
	{transaction.FieldTraceID, func(t *ent.Transaction) any { return &t.TraceID }},
	{transaction.FieldPaymentProof, func(t *ent.Transaction) any { return &t.PaymentProof }},
	{transaction.FieldWalletReference, func(t *ent.Transaction) any { return &t.WalletReference }},
	{transaction.FieldAccountReference, func(t *ent.Transaction) any { return &t.AccountReference }},
	{transaction.FieldCreatedAt, func(t *ent.Transaction) any { return &t.CreatedAt }},
	{transaction.FieldUpdatedAt, func(t *ent.Transaction) any { return &t.UpdatedAt }},
}

// nullAsEmpty scans a column of an Optional, not Nillable, field: ent reads
// its NULL as "".
type nullAsEmpty struct{ s *string }

func (n nullAsEmpty) Scan(v any) error {
	var ns sql.NullString
	if err := ns.Scan(v); err != nil {
		return err
	}
	*n.s = ns.String
	return nil
}

// Columns are the transactions columns a rendered transaction is made of, in
// the order Scan reads them.
func Columns() []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		out[i] = c.name
	}
	return out
}

// Scanner is one row of a query (*sql.Rows, *sql.Row).
type Scanner interface{ Scan(dest ...any) error }

// Scan reads a row of Columns and renders it.
func Scan(row Scanner) (Transaction, error) {
	var t ent.Transaction
	var dest [len(columns)]any
	for i, c := range columns {
		dest[i] = c.field(&t)
	}
	if err := row.Scan(dest[:]...); err != nil {
		return Transaction{}, err
	}
	return View(&t), nil
}

// WalletRef is a Transaction's wallet_reference: written, null or not,
// when Present; left out otherwise.
type WalletRef struct {
	Present bool
	Value   *string
}

// IsZero reports that the field is left out (encoding/json's omitzero).
func (r WalletRef) IsZero() bool { return !r.Present }

// MarshalJSON writes the reference or null.
func (r WalletRef) MarshalJSON() ([]byte, error) { return appendStringPtr(nil, r.Value), nil }

// UnmarshalJSON reads what MarshalJSON wrote: the key is present, with a
// reference or null. Stored event payloads are read back this way (GraphQL's
// Event.transaction).
func (r *WalletRef) UnmarshalJSON(b []byte) error {
	r.Present, r.Value = true, nil
	if string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, &r.Value)
}

// JSON renders t as the bytes webhooks and events carry.
func JSON(t *ent.Transaction) ([]byte, error) { return json.Marshal(View(t)) }
