package rest

import (
	"net/http"

	"merchantpay/internal/accounts"
	"merchantpay/internal/banks"
	"merchantpay/internal/cryptopay"
	"merchantpay/internal/deposits"
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

// Ops are the operations behind the routes.
type Ops struct {
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
}

// routes is the one route table of the REST API.
func (o *Ops) routes() []Route {
	return []Route{
		{Method: http.MethodPost, Pattern: "/wallets", Handle: o.createWallet},
		{Method: http.MethodGet, Pattern: "/wallets", Handle: o.listWallets},
		{Method: http.MethodGet, Pattern: "/wallets/{wallet_reference}", Handle: o.getWallet},
		{Method: http.MethodPost, Pattern: "/wallets/{wallet_reference}", Handle: o.createAccount},
		{Method: http.MethodPost, Pattern: "/accounts", Handle: o.createGlobalAccount},
		{Method: http.MethodGet, Pattern: "/misc/banks", Access: PublicKey, Handle: o.listBanks},
		{Method: http.MethodPost, Pattern: "/misc/banks/resolve", Lookup: true, Handle: o.resolveBank},
		{Method: http.MethodGet, Pattern: "/balances", Handle: o.listBalances},
		{Method: http.MethodPost, Pattern: "/sandbox/balances/fund", Handle: o.fundBalance},
		{Method: http.MethodPost, Pattern: "/sandbox/deposits/bank-transfer", Handle: o.simulateBankTransfer},
		{Method: http.MethodGet, Pattern: "/transactions", Handle: o.listTransactions},
		{Method: http.MethodGet, Pattern: "/transactions/{reference}", Handle: o.getTransaction, WithKey: o.getTransactionWithKey},
		{Method: http.MethodPost, Pattern: "/transactions/swap", Handle: o.createSwap},
		{Method: http.MethodPost, Pattern: "/transactions/withdraw", Handle: o.withdraw},
		{Method: http.MethodPost, Pattern: "/transactions/deposit", Handle: o.startDeposit},
		{Method: http.MethodPost, Pattern: "/sandbox/deposits/crypto-pay/{prepayId}", Handle: o.completeCryptoPay},
		{Method: http.MethodGet, Pattern: "/markets/rates", Access: PublicKey, Handle: o.getRates},
		{Method: http.MethodPost, Pattern: "/rates/create", Handle: o.createRate},
		{Method: http.MethodPost, Pattern: "/rates/refresh", Handle: o.refreshRate},
		{Method: http.MethodGet, Pattern: "/webhooks", Handle: o.listWebhooks},
		{Method: http.MethodPost, Pattern: "/webhooks", Handle: o.createWebhook},
		{Method: http.MethodDelete, Pattern: "/webhooks/{id}", Handle: o.deleteWebhook},
		{Method: http.MethodPost, Pattern: "/webhooks/{id}/roll-secret", Handle: o.rollWebhookSecret},
	}
}

// RouteTable lists the REST API's routes as "METHOD /pattern", so that a
// test can check each one against what it covers.
func RouteTable() []string {
	rs := (&Ops{}).routes()
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Method + " " + r.Pattern
	}
	return out
}
