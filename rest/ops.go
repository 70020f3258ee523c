package rest

import (
	"net/http"

	"merchantpay/internal/wallets"
)

// Ops are the operations behind the routes.
type Ops struct {
	Wallets *wallets.Service
}

// routes is the one route table of the REST API.
func (o *Ops) routes() []Route {
	return []Route{
		{Method: http.MethodPost, Pattern: "/wallets", Handle: o.createWallet},
		{Method: http.MethodGet, Pattern: "/wallets", Handle: o.listWallets},
		{Method: http.MethodGet, Pattern: "/wallets/{wallet_reference}", Handle: o.getWallet},
	}
}
