package server

import (
	"net/http/httptest"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"merchantpay/internal/merchants"
	"merchantpay/internal/rails"
	"merchantpay/pipeline"
)

// TestOutsideFromInspect: GraphQL's Outside answers from what inspect found
// when the idempotency step's key extractor read the request: true for a
// live-mode mutation on live rails that selects one calling a provider
// (by its name, under an alias, in a fragment), false for any other, in
// test mode, and on the sandbox rails.
func TestOutsideFromInspect(t *testing.T) {
	live := &gqlHandler{app: &App{Router: &rails.Router{Live: &rails.Live{}}}}
	sandbox := &gqlHandler{app: &App{Router: &rails.Router{}}}
	for _, tc := range []struct {
		query    string
		provider bool
	}{
		{`mutation { createWallet(input: {}) { reference } }`, true},
		{`mutation { a: createFiatAccount(input: {}) { accountNumber } }`, true},
		{`mutation { ... on Mutation { startDeposit(input: {}) { reference } } }`, true},
		{`mutation M { ...F } fragment F on Mutation { resolveBankAccount(input: {}) { accountName } }`, true},
		{`mutation { withdraw(input: {}) { reference } }`, false},
	} {
		for _, mode := range []string{rails.ModeLive, "test"} {
			c := &pipeline.Call{R: httptest.NewRequest("POST", "/graphql", nil), Principal: merchants.Principal{Mode: mode},
				Input: &gqlCall{params: &graphql.RawParams{Query: tc.query}}}
			if _, mutation, err := httpKey(c); err != nil || !mutation {
				t.Fatalf("%s: mutation %v, %v", tc.query, mutation, err)
			}
			if got, want := live.outside(c), tc.provider && mode == rails.ModeLive; got != want {
				t.Errorf("%s in %s mode on live rails: outside %v, want %v", tc.query, mode, got, want)
			}
			if sandbox.outside(c) {
				t.Errorf("%s in %s mode on the sandbox: outside", tc.query, mode)
			}
		}
	}
}
