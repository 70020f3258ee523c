package server_test

import (
	"testing"

	"merchantpay/server/servertest"
)

// A mutation's answer is read in the mutation's transaction, before it
// commits: a deposit's answer lists the event the deposit wrote, and that
// event's deliveries (none yet: fan-out comes after the commit) are found
// rather than refused as an unknown event.
func TestMutationAnswerReadsItsEvents(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic", "currency": "NGN"}).Expect(201).Data()
		dep := e.GQL(m.TestSecret, `mutation($n: String!) { simulateBankTransfer(input: {accountNumber: $n, amount: "5000", narration: "rent"}) {
			reference events { event deliveries { id } } } }`, map[string]any{"n": acc["account_number"]}).GQLData()["simulateBankTransfer"].(map[string]any)
		evs, _ := dep["events"].([]any)
		if len(evs) != 1 {
			t.Fatalf("the deposit's answer lists events %v", dep["events"])
		}
		ev := evs[0].(map[string]any)
		if ds, ok := ev["deliveries"].([]any); ev["event"] != "deposit.success" || !ok || len(ds) != 0 {
			t.Fatalf("the deposit's event in its answer: %v", ev)
		}
	})
}
