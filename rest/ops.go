package rest

import (
	"net/http"

	"merchantpay/internal/ops"
)

// Ops are the REST handlers: methods on the operations they call, the
// one Services struct both APIs take.
type Ops struct{ ops.Services }

// onProvider reports whether mode's operations call a live provider.
func (o *Ops) onProvider(mode string) bool { return o.Rails != nil && !o.Rails.OnSandbox(mode) }

// routes is the one route table of the REST API.
func (o *Ops) routes() []Route {
	return []Route{
		{Method: http.MethodPost, Pattern: "/wallets", Handle: o.createWallet, Outside: o.onProvider},
		{Method: http.MethodGet, Pattern: "/wallets", Handle: o.listWallets},
		{Method: http.MethodGet, Pattern: "/wallets/{wallet_reference}", Handle: o.getWallet},
		{Method: http.MethodPost, Pattern: "/wallets/{wallet_reference}", Handle: o.createAccount, Outside: o.onProvider},
		{Method: http.MethodPost, Pattern: "/accounts", Handle: o.createGlobalAccount, Outside: o.onProvider},
		{Method: http.MethodGet, Pattern: "/misc/banks", Access: PublicKey, Handle: o.listBanks},
		{Method: http.MethodPost, Pattern: "/misc/banks/resolve", Lookup: true, Handle: o.resolveBank},
		{Method: http.MethodGet, Pattern: "/balances", Handle: o.listBalances},
		{Method: http.MethodGet, Pattern: "/balances/{currency}/history", Handle: o.balanceHistory},
		{Method: http.MethodPost, Pattern: "/sandbox/balances/fund", Handle: o.fundBalance},
		{Method: http.MethodPost, Pattern: "/sandbox/deposits/bank-transfer", Handle: o.simulateBankTransfer},
		{Method: http.MethodGet, Pattern: "/transactions", Handle: o.listTransactions},
		{Method: http.MethodGet, Pattern: "/transactions/{reference}", Handle: o.getTransaction, WithKey: o.getTransactionWithKey},
		{Method: http.MethodPost, Pattern: "/transactions/swap", Handle: o.createSwap},
		{Method: http.MethodPost, Pattern: "/transactions/withdraw", Handle: o.withdraw},
		{Method: http.MethodPost, Pattern: "/transactions/deposit", Handle: o.startDeposit, Outside: o.onProvider},
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
