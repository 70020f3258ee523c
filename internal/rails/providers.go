package rails

import (
	"context"
	"errors"
	"net/http"
	"time"

	"merchantpay/internal/money"
)

// This file is the contract between the service and the adapters of real
// payment providers (internal/rails/paystack, flutterwave, binancepay). Live
// mode runs on them when LIVE_RAILS names them; test mode always runs on
// the sandbox. Every method here makes network calls, so none is ever called
// inside a database transaction.

// Provider names, as LIVE_RAILS spells them.
const (
	ProviderPaystack    = "paystack"
	ProviderFlutterwave = "flutterwave"
	ProviderBinancePay  = "binancepay"
)

// ErrOutcomeUnknown wraps an answer that does not say what happened to a
// request that may have changed something at the provider: a timeout, a
// 5xx, a reset connection or a body that does not parse. The caller must
// look the object up before trying again, never resubmit blind.
var ErrOutcomeUnknown = errors.New("rails: outcome at the provider unknown")

// ErrRefused wraps a provider's definite refusal of a request: it answered
// that it did not do what was asked (a Binance FAIL, a Paystack 4xx). Asking
// again the same way cannot succeed, so a merchant is answered with a 4xx,
// never a 503 "try again".
var ErrRefused = errors.New("rails: the provider refused the request and did nothing")

// ErrNoRecord is a look-up's answer when the provider has no object under
// the reference asked for.
var ErrNoRecord = errors.New("rails: the provider has no record of this reference")

// PayoutReversed is a payout the provider reported paid and later returned
// to our balance: the beneficiary did not keep the money.
const PayoutReversed PayoutStatus = "reversed"

// PayoutProvider carries live payouts of one country out through a provider.
//
// SubmitPayout looks the payout up first, by the provider reference derived
// from Payout.Reference, and submits only when the provider has no record
// of it; so it is safe to call again after a timeout, a 5xx or a crash
// between submitting and recording. CheckPayout is the look-up alone. Both
// answer PayoutPending, PayoutSucceeded, PayoutFailed or PayoutReversed in
// PayoutResult (with the provider's amount in ProviderAmount), or an error
// wrapping ErrOutcomeUnknown when the answer says nothing certain.
type PayoutProvider interface {
	Provider() string
	SubmitPayout(ctx context.Context, p Payout) (PayoutResult, error)
	CheckPayout(ctx context.Context, q PayoutQuery) (PayoutResult, error)
}

// NameEnquirer resolves the holder's name of a bank account (the name
// enquiry); apperr.AccountNotResolved when the bank knows no such account.
type NameEnquirer interface {
	ResolveAccount(ctx context.Context, bankCode, accountNumber string) (accountName string, err error)
}

// VirtualAccountRequest asks a provider for a dedicated NGN account.
type VirtualAccountRequest struct {
	// Reference is our account_reference. Asking again with the same
	// Reference finds the account made the first time instead of making
	// another (the customer's identity at the provider is derived from it).
	Reference string
	FirstName string
	LastName  string
	Email     string
	Phone     string
}

// VirtualAccount is a dedicated account a provider issued.
type VirtualAccount struct {
	AccountNumber string
	AccountName   string
	BankName      string
	// BankCode is the CBN code when the provider tells it, else empty.
	BankCode string
	// CustomerCode is the provider's customer the account belongs to.
	CustomerCode string
}

// AccountProvider issues live NGN virtual accounts.
type AccountProvider interface {
	Provider() string
	CreateVirtualAccount(ctx context.Context, req VirtualAccountRequest) (VirtualAccount, error)
}

// CryptoOrder is one crypto-pay checkout at a provider.
type CryptoOrder struct {
	// Reference is our transaction reference; the provider's trade number
	// is derived from it.
	Reference string
	// Amount is exact decimal text in Currency (a crypto ticker or a fiat
	// currency code, upper case). An order priced in fiat is paid in
	// FiatOrderCurrency at the provider's conversion.
	Amount      string
	Currency    string
	Description string
	ExpiresAt   time.Time
	// WebhookURL, ReturnURL and CancelURL are optional.
	WebhookURL string
	ReturnURL  string
	CancelURL  string
}

// FiatOrderCurrency is the crypto asset an order priced in a fiat currency
// is paid in and reported in by its provider (Binance Pay: USDT). The
// provider converts the fiat amount; the amount it reports in this asset
// cannot be compared with ours.
const FiatOrderCurrency = "USDT"

// CryptoOrderCreated is the provider's answer to a new order.
type CryptoOrderCreated struct {
	// ProviderReference is the provider's id of the order (Binance's
	// prepayId, as a string); TradeNo the derived trade number sent.
	ProviderReference string
	TradeNo           string
	CheckoutURL       string
	QRContent         string
	QRCodeLink        string
	Deeplink          string
	UniversalURL      string
	ExpiresAt         time.Time
}

// Crypto order statuses, as the service reads a provider's.
const (
	OrderPending = "pending"
	OrderPaid    = "paid"
	OrderClosed  = "closed"
	OrderExpired = "expired"
	OrderFailed  = "failed"
)

// CryptoOrderStatus is where an order stands at the provider.
type CryptoOrderStatus struct {
	Status string
	// Amount is exact decimal text in Currency.
	Amount        string
	Currency      string
	TransactionID string
	PaidAt        time.Time
}

// CryptoOrderProvider takes crypto-pay deposits in live mode.
type CryptoOrderProvider interface {
	Provider() string
	CreateOrder(ctx context.Context, o CryptoOrder) (CryptoOrderCreated, error)
	// QueryOrder and CloseOrder take our reference; ErrNoRecord when the
	// provider has no such order.
	QueryOrder(ctx context.Context, reference string) (CryptoOrderStatus, error)
	CloseOrder(ctx context.Context, reference string) error
}

// WebhookReceiver reads a provider's webhooks. Verify authenticates a
// delivery from its headers and raw body before anything reads it (an error
// answers 401 and changes nothing); it may fetch keys from the provider, so
// it runs outside any transaction. Notices parses a verified body; Ack is
// the 200 answer the provider expects.
type WebhookReceiver interface {
	Provider() string
	Verify(ctx context.Context, h http.Header, body []byte) error
	Notices(body []byte) ([]Notice, error)
	Ack() (contentType string, body []byte)
}

// InflowRefunder is a WebhookReceiver whose provider can send an inflow
// back to its payer. A provider whose receiver does not implement it (none
// of the adapters does: they have no refund call) cannot: an inflow of its
// that cannot be booked as asked is credited without what cannot be kept,
// or kept for an operator, never reported as refunded.
type InflowRefunder interface {
	RefundsInflows() bool
}

// Notice is one fact a provider's webhook tells; exactly one of Payout,
// Inflow and Order is set (none for an event the service does not use).
type Notice struct {
	// Key identifies the fact at the provider (event name and the
	// provider's id), so that a repeated delivery changes nothing.
	Key    string
	Payout *PayoutNotice
	Inflow *InflowNotice
	Order  *OrderNotice
}

// PayoutNotice is news of a payout.
type PayoutNotice struct {
	// ProviderReference is the reference the payout was submitted under;
	// the service finds its transaction by it.
	ProviderReference string
	// ProviderID is the provider's own id of the transfer, if any.
	ProviderID string
	Status     PayoutStatus
	// Amount is in minor units of Currency, converted exactly from the
	// provider's unit.
	Amount   int64
	Currency money.Currency
	Reason   string
	At       time.Time
}

// InflowNotice is money received into a dedicated account.
type InflowNotice struct {
	// ProviderReference identifies the inflow at the provider: credited at
	// most once.
	ProviderReference string
	AccountNumber     string
	CustomerCode      string
	Amount            int64
	Currency          money.Currency
	Narration         string
	SenderName        string
	SenderBank        string
	SenderAccount     string
	PaidAt            time.Time
}

// OrderNotice is news of a crypto order.
type OrderNotice struct {
	TradeNo           string
	ProviderReference string
	// Status is OrderPaid or OrderClosed.
	Status        string
	Amount        string
	Currency      string
	TransactionID string
	At            time.Time
}

// ProviderConfig is what every adapter is built from.
type ProviderConfig struct {
	// BaseURL is scheme and host only; the adapter adds the provider's
	// documented paths.
	BaseURL string
	// Timeout bounds each call (RAILS_TIMEOUT).
	Timeout time.Duration
	// Client is the HTTP client to use; nil for a default one.
	Client *http.Client
}
