package transactions_test

import (
	"slices"
	"testing"

	"merchantpay/internal/cryptopay"
	"merchantpay/internal/deposits"
	"merchantpay/internal/swaps"
	"merchantpay/internal/transactions"
	"merchantpay/internal/withdrawals"
)

// Every prefix a service reference is written with is one ServiceReference
// knows, so no merchant reference can take the form of one.
func TestServicePrefixesCoverEveryWriter(t *testing.T) {
	for _, p := range []string{withdrawals.ReferencePrefix, deposits.ReferencePrefix, cryptopay.ReferencePrefix, swaps.ReferencePrefix} {
		if !slices.Contains(transactions.ServicePrefixes, p) {
			t.Errorf("service references are written with %q, which ServicePrefixes lacks", p)
		}
	}
}
