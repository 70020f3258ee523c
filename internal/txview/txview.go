// Package txview renders a Transaction exactly as the spec lists it. REST
// answers, webhook bodies and subscription events all use this one shape, so
// a webhook's data equals what GET /transactions/{ref} shows.
package txview

import (
	"encoding/json"

	"merchantpay/ent"
	"merchantpay/internal/jsonx"
	"merchantpay/internal/money"
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
	WalletReference   *string    `json:"wallet_reference,omitempty"`
	AccountReference  *string    `json:"account_reference,omitempty"`
	CreatedAt         string     `json:"created_at"`
	UpdatedAt         string     `json:"updated_at"`
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
		WalletReference:   t.WalletReference,
		AccountReference:  t.AccountReference,
		CreatedAt:         jsonx.Time(t.CreatedAt),
		UpdatedAt:         jsonx.Time(t.UpdatedAt),
	}
	if t.ToAmount != nil && t.ToCurrency != nil {
		n := amount(*t.ToAmount, *t.ToCurrency)
		v.ToAmount = &n
	}
	return v
}

// JSON renders t as the bytes webhooks and events carry.
func JSON(t *ent.Transaction) ([]byte, error) { return json.Marshal(View(t)) }
