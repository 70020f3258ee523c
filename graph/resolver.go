// Package graph holds the GraphQL resolvers: each converts its input, calls
// one operation in internal/, and maps the result.
package graph

import (
	"merchantpay/internal/accounts"
	"merchantpay/internal/banks"
	"merchantpay/internal/broker"
	"merchantpay/internal/clock"
	"merchantpay/internal/cryptopay"
	"merchantpay/internal/deposits"
	"merchantpay/internal/events"
	"merchantpay/internal/exports"
	"merchantpay/internal/ledger"
	"merchantpay/internal/merchants"
	"merchantpay/internal/rails"
	"merchantpay/internal/rates"
	"merchantpay/internal/swaps"
	"merchantpay/internal/transactions"
	"merchantpay/internal/wallets"
	"merchantpay/internal/webhooks"
	"merchantpay/internal/withdrawals"
)

//go:generate go tool gqlgen generate

// Services are the operations the resolvers call.
type Services struct {
	Merchants    *merchants.Service
	Wallets      *wallets.Service
	Transactions *transactions.Service
	Ledger       *ledger.Service
	Accounts     *accounts.Service
	Banks        *banks.Directory
	NameEnquiry  *rails.NameEnquiry
	Rates        *rates.Service
	Swaps        *swaps.Service
	Deposits     *deposits.Service
	CryptoPay    *cryptopay.Service
	Webhooks     *webhooks.Service
	Outbox       *events.Outbox
	Broker       *broker.Broker
	Withdrawals  *withdrawals.Service
	Exports      *exports.Service
	// Clock says what "today" is (volumeToday).
	Clock clock.Clock
}

// Resolver is the root resolver.
type Resolver struct {
	Svc Services
}
