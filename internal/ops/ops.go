// Package ops holds Services, the one list of the operations every
// transport calls: the REST handlers and the GraphQL resolvers take the
// same struct, so that a service added here is there for both.
package ops

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

// Services are the operations behind the REST routes and the GraphQL
// fields. Sandbox-only operations (Ledger.Fund, Deposits.Simulate,
// CryptoPay.Complete) refuse by themselves where the simulations are not
// offered; no transport checks for them.
type Services struct {
	Merchants    *merchants.Service
	Wallets      *wallets.Service
	Ledger       *ledger.Service
	Transactions *transactions.Service
	Accounts     *accounts.Service
	Banks        *banks.Directory
	NameEnquiry  *rails.NameEnquiry
	Rates        *rates.Service
	Swaps        *swaps.Service
	Deposits     *deposits.Service
	Webhooks     *webhooks.Service
	Withdrawals  *withdrawals.Service
	CryptoPay    *cryptopay.Service
	// Outbox and Broker serve GraphQL's event subscriptions.
	Outbox *events.Outbox
	Broker *broker.Broker
	// Exports makes the one-time tokens of CSV exports.
	Exports *exports.Service
	// Clock says what "today" is (volumeToday).
	Clock clock.Clock
	// Simulations says in which modes the sandbox's simulations are
	// offered (Merchant.simulations), as the services that run them see it.
	Simulations rails.Simulations
	// Rails, when set, says which modes run on live providers: there the
	// operations that call a provider run outside a request transaction.
	Rails *rails.Router
}
