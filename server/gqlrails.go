package server

import "merchantpay/pipeline"

// providerMutations are the mutations whose operations call a live
// provider in live mode (a virtual account, a crypto-pay checkout, a name
// enquiry).
var providerMutations = map[string]bool{"createWallet": true, "createFiatAccount": true, "startDeposit": true,
	"resolveBankAccount": true}

// outside is the pipeline's Route.Outside of GraphQL's mutations: on live
// rails, in live mode, whether the mutation selects one of
// providerMutations. The idempotency step asks it after its key extractor
// (httpKey, socketKey), so inspect has already read the request, once,
// and kept the answer in the call's gqlCall.
func (h *gqlHandler) outside(c *pipeline.Call) bool {
	if h.app.Router == nil || h.app.Router.OnSandbox(c.Principal.Mode) {
		return false
	}
	return c.Input.(*gqlCall).provider
}
