package txview

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"merchantpay/present/jsonx"
)

// AppendJSON appends v as encoding/json writes it with HTML escaping off
// (the REST answers' encoder), without reflection: a transaction is most of
// what GET /transactions/{ref} renders, and encoding/json spent about as
// much CPU on it as the database look-up's decoding did.
// TestAppendJSONMatchesEncoding holds the two outputs equal.
func (v Transaction) AppendJSON(b []byte) []byte {
	b = append(b, `{"reference":`...)
	b = AppendString(b, v.Reference)
	b = append(b, `,"merchant_reference":`...)
	b = appendStringPtr(b, v.MerchantReference)
	b = append(b, `,"type":`...)
	b = AppendString(b, v.Type)
	b = append(b, `,"purpose":`...)
	b = AppendString(b, v.Purpose)
	b = append(b, `,"status":`...)
	b = AppendString(b, v.Status)
	b = append(b, `,"from_amount":`...)
	b = appendNum(b, v.FromAmount)
	b = append(b, `,"amount":`...)
	b = appendNum(b, v.Amount)
	b = append(b, `,"amount_charged":`...)
	b = appendNum(b, v.AmountCharged)
	b = append(b, `,"amount_settled":`...)
	b = appendNum(b, v.AmountSettled)
	b = append(b, `,"currency":`...)
	b = AppendString(b, v.Currency)
	b = append(b, `,"from_currency":`...)
	b = AppendString(b, v.FromCurrency)
	b = append(b, `,"to_amount":`...)
	b = appendNumPtr(b, v.ToAmount)
	b = append(b, `,"to_currency":`...)
	b = appendStringPtr(b, v.ToCurrency)
	b = append(b, `,"trx_rate":`...)
	b = appendNumPtr(b, v.TrxRate)
	b = append(b, `,"rateId":`...)
	b = appendStringPtr(b, v.RateID)
	b = append(b, `,"from":`...)
	b = AppendString(b, v.From)
	b = append(b, `,"to":`...)
	b = AppendString(b, v.To)
	b = append(b, `,"channel":`...)
	b = AppendString(b, v.Channel)
	b = append(b, `,"narration":`...)
	b = AppendString(b, v.Narration)
	b = append(b, `,"beneficiary":`...)
	b = appendStringPtr(b, v.Beneficiary)
	b = append(b, `,"fee_bearer":`...)
	b = AppendString(b, v.FeeBearer)
	b = append(b, `,"fee":`...)
	b = appendNum(b, v.Fee)
	b = append(b, `,"destination":`...)
	b = AppendString(b, v.Destination)
	b = append(b, `,"payment_slug":`...)
	b = AppendString(b, v.PaymentSlug)
	b = append(b, `,"from_merchant":`...)
	b = AppendString(b, v.FromMerchant)
	b = append(b, `,"to_merchant":`...)
	b = appendStringPtr(b, v.ToMerchant)
	b = append(b, `,"settled_at":`...)
	b = appendStringPtr(b, v.SettledAt)
	b = append(b, `,"settlement_time":`...)
	b = appendStringPtr(b, v.SettlementTime)
	b = append(b, `,"settlement_date":`...)
	b = appendStringPtr(b, v.SettlementDate)
	b = append(b, `,"reject_reason":`...)
	b = appendStringPtr(b, v.RejectReason)
	b = append(b, `,"trace_id":`...)
	b = appendStringPtr(b, v.TraceID)
	b = append(b, `,"payment_proof":`...)
	b = appendStringPtr(b, v.PaymentProof)
	if v.WalletReference.Present {
		b = append(b, `,"wallet_reference":`...)
		b = appendStringPtr(b, v.WalletReference.Value)
	}
	if v.AccountReference != nil {
		b = append(b, `,"account_reference":`...)
		b = AppendString(b, *v.AccountReference)
	}
	b = append(b, `,"created_at":`...)
	b = AppendString(b, v.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = AppendString(b, v.UpdatedAt)
	return append(b, '}')
}

// AppendString appends s as a JSON string, as encoding/json writes it with
// HTML escaping off. Strings of printable ASCII with nothing to escape (all
// of a transaction's but free text) are copied; any other string is
// written by encoding/json itself.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return appendEncoded(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func appendEncoded(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		// A Go string always encodes.
		panic("txview: encoding a string: " + err.Error())
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return AppendString(b, *s)
}

// appendNum writes what jsonx.Num's MarshalJSON writes.
func appendNum(b []byte, n jsonx.Num) []byte {
	return append(b, decimal.Decimal(n).String()...)
}

func appendNumPtr(b []byte, n *jsonx.Num) []byte {
	if n == nil {
		return append(b, "null"...)
	}
	return appendNum(b, *n)
}
