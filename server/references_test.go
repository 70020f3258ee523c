package server_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"

	"merchantpay/server/servertest"
)

// A merchant reference never has the form of a service reference (WTH-,
// DEP- or SWP- and a UUID, in any case): a look-up by reference finds
// either kind without regard to case, so the two must never name different
// transactions. Service references are found in any case too.
func TestMerchantReferenceNotServiceShaped(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		a, _, ref := withdrawalToGet(t, e, "order-1")
		id := strings.TrimPrefix(ref, "WTH-")
		beneficiary := map[string]any{"email": "ada@example.com", "bank": "058", "account_name": "Ada Obi", "account_number": "0123456789"}
		for _, bad := range []string{ref, "wth-" + id, "Wth-" + strings.ToUpper(id), "DEP-" + uuid.NewString(), "swp-" + strings.ToUpper(uuid.NewString())} {
			r := e.REST("POST", "/transactions/withdraw", a.TestSecret, map[string]any{"amount": 100, "currency": "NGN", "reference": bad,
				"beneficiary": beneficiary})
			if r.Status != 400 || r.Code() != "VALIDATION_ERROR" || strings.Join(r.Fields(), ",") != "reference" {
				t.Errorf("REST withdraw with reference %s: %d %s", bad, r.Status, r.Body)
			}
			g := e.GQL(a.TestSecret, `mutation($r: String) { withdraw(input: {amount: "100", currency: "NGN", reference: $r,
				beneficiary: {email: "ada@example.com", bank: "058", accountName: "Ada Obi", accountNumber: "0123456789"}}) { reference } }`,
				map[string]any{"r": bad})
			if g.Code() != "VALIDATION_ERROR" || !strings.Contains(string(g.Body), `"reference"`) {
				t.Errorf("GraphQL withdraw with reference %s: %s", bad, g.Body)
			}
		}
		// References merely near that form are merchant references as before.
		for _, ok := range []string{"WTH-" + id[:35], "WTH-" + id + "0", "XYZ-" + id, "WTH_" + id} {
			e.REST("POST", "/transactions/withdraw", a.TestSecret, map[string]any{"amount": 100, "currency": "NGN", "reference": ok,
				"beneficiary": beneficiary}).Expect(200)
		}
		// The service's reference is found whatever its case.
		for _, asked := range []string{ref, "wth-" + id, "wth-" + strings.ToUpper(id), "WTH-" + strings.ToUpper(id)} {
			if got := e.REST("GET", "/transactions/"+asked, a.TestSecret, nil).Expect(200).Data(); got["reference"] != ref {
				t.Errorf("GET %s: %v", asked, got["reference"])
			}
			g := e.GQL(a.TestSecret, `query($r: String!) { transaction(reference: $r) { reference } }`, map[string]any{"r": asked}).GQLData()
			if tx, _ := g["transaction"].(map[string]any); tx == nil || tx["reference"] != ref {
				t.Errorf("GraphQL transaction(%s): %v", asked, g)
			}
			if l := e.REST("GET", "/transactions?search="+asked, a.TestSecret, nil).Expect(200).List(); len(l) != 1 || l[0].(map[string]any)["reference"] != ref {
				t.Errorf("GET /transactions?search=%s: %v", asked, l)
			}
		}
	})
}

// A narration's !!REF!! of a service reference's form cannot be refused
// (the money has arrived): the deposit is refunded, as when its reference
// is already taken, and claims no reference.
func TestNarrationReferenceOfServiceForm(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic"}).Expect(201).Data()["account_number"].(string)
		shaped := "wth-" + strings.ToUpper(uuid.NewString())
		d := e.REST("POST", "/sandbox/deposits/bank-transfer", m.TestSecret, map[string]any{"account_number": acc, "amount": 5000,
			"narration": "pay !!" + shaped + "!!"}).Expect(200).Data()
		if d["status"] != "refunded" || d["merchant_reference"] != nil || !strings.Contains(d["reject_reason"].(string), "form of the service's own references") {
			t.Errorf("deposit with narration reference %s: %v", shaped, d)
		}
		// An ordinary narration reference is still taken.
		d = e.REST("POST", "/sandbox/deposits/bank-transfer", m.TestSecret, map[string]any{"account_number": acc, "amount": 5000,
			"narration": "pay !!order-7!!"}).Expect(200).Data()
		if d["status"] != "success" || d["merchant_reference"] != "order-7" {
			t.Errorf("deposit with narration reference order-7: %v", d)
		}
	})
}
