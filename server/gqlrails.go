package server

import (
	"github.com/vektah/gqlparser/v2/ast"

	"merchantpay/pipeline"
)

// providerMutations are the mutations whose operations call a live
// provider in live mode (a virtual account, a crypto-pay checkout, a name
// enquiry).
var providerMutations = map[string]bool{"createWallet": true, "createFiatAccount": true, "startDeposit": true,
	"resolveBankAccount": true}

// outside is the pipeline's Route.Outside of GraphQL's mutations.
func (h *gqlHandler) outside(c *pipeline.Call) bool { return h.callsProvider(c.Principal.Mode, c.Body) }

// callsProvider reports whether the mutation request body, in mode, runs an
// operation that calls a live provider.
func (h *gqlHandler) callsProvider(mode string, body []byte) bool {
	if h.app.Router == nil || h.app.Router.OnSandbox(mode) {
		return false
	}
	params, err := decodeParams(body)
	if err != nil {
		return false
	}
	doc, op := operationOf(params)
	if op == nil {
		return false
	}
	found := false
	var walk func(ast.SelectionSet, int)
	walk = func(set ast.SelectionSet, depth int) {
		for _, sel := range set {
			switch s := sel.(type) {
			case *ast.Field:
				found = found || providerMutations[s.Name]
			case *ast.InlineFragment:
				if depth < 10 {
					walk(s.SelectionSet, depth+1)
				}
			case *ast.FragmentSpread:
				if f := doc.Fragments.ForName(s.Name); f != nil && depth < 10 {
					walk(f.SelectionSet, depth+1)
				}
			}
		}
	}
	walk(op.SelectionSet, 0)
	return found
}
