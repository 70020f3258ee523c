package rest

import (
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/present/txview"
)

func benchTransaction() *ent.Transaction {
	now := time.Date(2026, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	ref, key, ben := "order-1", "order-1", `{"email":"ada@example.com","bank":"058","account_name":"Ada Obi","account_number":"0123456789"}`
	return &ent.Transaction{ID: "0190f0e4-7a7b-7c3d-9e8f-0123456789ab", MerchantID: "m", Mode: "test",
		Reference: "WTH-0b6f1f0e-6a43-4e0b-9a0e-6f1d2c3b4a59", MerchantReference: &ref, MerchantReferenceKey: &key,
		Type: "WITHDRAWAL", Purpose: "WITHDRAWAL", Status: "pending",
		FromAmount: 1000050, FromCurrency: "NGN", Amount: 1000050, Currency: "NGN",
		AmountCharged: 1001125, AmountSettled: 1000050, Fee: 1075, FeeCurrency: "NGN",
		FromParty: "SELF", ToParty: "OTHER", Channel: "API", Narration: "Refund for order 1", Beneficiary: &ben,
		FeeBearer: "merchant", Destination: "main_balance", PaymentSlug: "instant-bank-payout", FromMerchant: "Acme Pay",
		SettledAt: &now, CreatedAt: now, UpdatedAt: now}
}

// The answer of GET /transactions/{ref} and of a withdrawal: the spec's
// Transaction inside the envelope.
func BenchmarkRenderTransaction(b *testing.B) {
	t := benchTransaction()
	b.ReportAllocs()
	for b.Loop() {
		_ = renderOK(Result{Message: "Transaction retrieved successfully", Data: txview.View(t)})
	}
}

// The payload every event stores (txview.JSON), once per state change.
func BenchmarkTransactionJSON(b *testing.B) {
	t := benchTransaction()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := txview.JSON(t); err != nil {
			b.Fatal(err)
		}
	}
}
