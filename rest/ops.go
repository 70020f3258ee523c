package rest

import (
	"net/http"

	"merchantpay/internal/accounts"
	"merchantpay/internal/banks"
	"merchantpay/internal/ledger"
	"merchantpay/internal/rails"
	"merchantpay/internal/rates"
	"merchantpay/internal/transactions"
	"merchantpay/internal/wallets"
)

// Ops are the operations behind the routes.
type Ops struct {
	Wallets      *wallets.Service
	Ledger       *ledger.Service
	Transactions *transactions.Service
	Accounts     *accounts.Service
	Banks        *banks.Directory
	NameEnquiry  *rails.NameEnquiry
	Rates        *rates.Service
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
		{Method: http.MethodPost, Pattern: "/misc/banks/resolve", Handle: o.resolveBank},
		{Method: http.MethodGet, Pattern: "/balances", Handle: o.listBalances},
		{Method: http.MethodPost, Pattern: "/sandbox/balances/fund", Handle: o.fundBalance, Sandbox: true},
		{Method: http.MethodGet, Pattern: "/transactions", Handle: o.listTransactions},
		{Method: http.MethodGet, Pattern: "/transactions/{reference}", Handle: o.getTransaction},
		{Method: http.MethodGet, Pattern: "/markets/rates", Access: PublicKey, Handle: o.getRates},
		{Method: http.MethodPost, Pattern: "/rates/create", Handle: o.createRate},
		{Method: http.MethodPost, Pattern: "/rates/refresh", Handle: o.refreshRate},
	}
}
