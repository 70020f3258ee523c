package server_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"merchantpay/server/servertest"
)

// The money mutations over GraphQL give the same transactions REST shows.
func TestGraphQLMoneyMutations(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic", "currency": "NGN"}).Expect(201).Data()
		dep := e.GQL(m.TestSecret, `mutation($n: String!) { simulateBankTransfer(input: {accountNumber: $n, amount: "5000", narration: "pay !!Inv-7!!"}) {
			reference merchantReference status type amount currency } }`, map[string]any{"n": acc["account_number"]}).GQLData()["simulateBankTransfer"].(map[string]any)
		if dep["status"] != "SUCCESS" || dep["type"] != "DEPOSIT" || dep["amount"] != "5000" || dep["merchantReference"] != "Inv-7" {
			t.Fatalf("deposit: %v", dep)
		}
		rest := e.REST("GET", "/transactions/inv-7", m.TestSecret, nil).Expect(200).Data()
		if rest["reference"] != dep["reference"] {
			t.Errorf("REST finds %v", rest["reference"])
		}
		got := e.GQL(m.TestSecret, `query($r: String!) { transaction(reference: $r) { reference amountSettled } }`, map[string]any{"r": dep["reference"]}).GQLData()["transaction"].(map[string]any)
		if got["amountSettled"] != "5000" {
			t.Errorf("transaction: %v", got)
		}
		// A swap of part of it.
		q := e.REST("POST", "/rates/create", m.TestSecret, map[string]any{"from_currency": "NGN", "to_currency": "USDT", "from_amount": 1600}).Expect(200).Data()
		sw := e.GQL(m.TestSecret, `mutation($r: String!) { swap(input: {rateReference: $r, reference: "sw-1"}) { reference type status fromAmount fromCurrency } }`,
			map[string]any{"r": q["reference"]}).GQLData()["swap"].(map[string]any)
		if sw["type"] != "SWAP" || sw["status"] != "PENDING" || sw["fromAmount"] != "1600" {
			t.Errorf("swap: %v", sw)
		}
		if r := e.GQL(m.TestSecret, `mutation($r: String!) { swap(input: {rateReference: $r}) { reference } }`, map[string]any{"r": q["reference"]}); r.Code() != "RATE_USED" {
			t.Errorf("second swap: %s", r.Body)
		}
		list := e.GQL(m.TestSecret, `{ transactions(first: 10, filter: {type: SWAP}) { edges { node { reference } } } }`, nil).GQLData()
		if n := len(list["transactions"].(map[string]any)["edges"].([]any)); n != 1 {
			t.Errorf("%d swaps listed", n)
		}
		// A withdrawal through GraphQL is the same transaction REST shows.
		wd := e.GQL(m.TestSecret, `mutation { withdraw(input: {amount: "1000", currency: "NGN", reference: "pay-1", narration: "rent",
			beneficiary: {email: "ada@example.com", bank: "058", accountName: "Ada Obi", accountNumber: "0123456789"}}) {
			reference merchantReference type status amount amountCharged fee feeBearer beneficiary paymentSlug } }`, nil).GQLData()["withdraw"].(map[string]any)
		rw := e.REST("GET", "/transactions/PAY-1", m.TestSecret, nil).Expect(200).Data()
		if wd["type"] != "WITHDRAWAL" || wd["status"] != "PENDING" || wd["feeBearer"] != "MERCHANT" || wd["reference"] != rw["reference"] ||
			wd["amountCharged"] != rw["amount_charged"].(interface{ String() string }).String() || wd["beneficiary"] != rw["beneficiary"] {
			t.Errorf("withdraw: %v vs %v", wd, rw)
		}
		if r := e.GQL(m.TestSecret, `mutation { withdraw(input: {amount: "1000", currency: "NGN", reference: "pay-1",
			beneficiary: {email: "ada@example.com", bank: "058", accountName: "Ada Obi", accountNumber: "0123456789"}}) { reference } }`, nil); r.Code() != "DUPLICATE_REFERENCE" {
			t.Errorf("duplicate withdrawal: %s", r.Body)
		}
		if r := e.GQL(m.TestSecret, `mutation { withdraw(input: {amount: "1000000", currency: "NGN",
			beneficiary: {email: "ada@example.com", bank: "058", accountName: "Ada Obi", accountNumber: "0123456789"}}) { reference } }`, nil); r.Code() != "INSUFFICIENT_BALANCE" {
			t.Errorf("insufficient: %s", r.Body)
		}

		// Crypto-pay is live only.
		if r := e.GQL(m.TestSecret, `mutation { enrolCryptoPay(input: {businessName: "Acme", logoUrl: "https://a.example/l.png", website: "https://a.example", successUrl: "https://a.example/ok", failureUrl: "https://a.example/ko"}) { status } }`, nil); r.Code() != "LIVE_MODE_ONLY" {
			t.Errorf("test-mode enrolment: %s", r.Body)
		}
		en := e.GQL(m.LiveSecret, `mutation { enrolCryptoPay(input: {businessName: "Acme", logoUrl: "https://a.example/l.png", website: "https://a.example", successUrl: "https://a.example/ok", failureUrl: "https://a.example/ko"}) { status businessName } }`, nil).GQLData()["enrolCryptoPay"].(map[string]any)
		if en["status"] != "APPROVED" {
			t.Errorf("enrolment: %v", en)
		}
		st := e.GQL(m.LiveSecret, `mutation { startDeposit(input: {depositMethod: "crypto-pay", requirement: {productName: "Shoes"}, amount: "25", currency: "USDT"}) {
			links { prepayId universalUrl expireTime productName } transaction { reference status } } }`, nil).GQLData()["startDeposit"].(map[string]any)
		links := st["links"].(map[string]any)
		// Epoch milliseconds as an integer literal, as REST writes them.
		if exp, _ := links["expireTime"].(json.Number); !regexp.MustCompile(`^[0-9]{13}$`).MatchString(string(exp)) {
			t.Errorf("expireTime %v, want an integer of epoch milliseconds", links["expireTime"])
		}
		done := e.GQL(m.LiveSecret, `mutation($p: String!) { completeCryptoPay(input: {prepayId: $p, outcome: SUCCESS}) { status amount currency } }`,
			map[string]any{"p": links["prepayId"]}).GQLData()["completeCryptoPay"].(map[string]any)
		if done["status"] != "SUCCESS" || done["currency"] != "USDT" {
			t.Errorf("completion: %v", done)
		}
		bal := e.GQL(m.LiveSecret, `{ balances { currency available } }`, nil).GQLData()["balances"].([]any)
		for _, b := range bal {
			if b := b.(map[string]any); b["currency"] == "USDT" && b["available"] != "25" {
				t.Errorf("USDT balance %v", b)
			}
		}
	})
}

// A keyed GraphQL withdrawal refused for its balance answers the refusal,
// and replays it; a keyed request may not carry a second mutation, not even
// through a fragment.
func TestGraphQLKeyedWithdrawalRefused(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Keyed GQL")
		e.REST("POST", "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "NGN", "amount": 50}).Expect(200)
		q := `mutation { withdraw(input: {amount: "100", currency: "NGN",
			beneficiary: {email: "ada@example.com", bank: "058", accountName: "Ada Obi", accountNumber: "0123456789"}}) { reference } }`
		r := e.GQL(m.TestSecret, q, nil, "Idempotency-Key", "gql-short")
		if r.Code() != "INSUFFICIENT_BALANCE" {
			t.Fatalf("refusal: %s", r.Body)
		}
		again := e.GQL(m.TestSecret, q, nil, "Idempotency-Key", "gql-short")
		if string(again.Body) != string(r.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: %s", again.Body)
		}
		bal := e.GQL(m.TestSecret, `{ balances { currency available } }`, nil).GQLData()["balances"].([]any)
		found := false
		for _, b := range bal {
			if b := b.(map[string]any); b["currency"] == "NGN" {
				found = true
				if b["available"] != "50" {
					t.Errorf("NGN balance %v after a refusal", b["available"])
				}
			}
		}
		if !found {
			t.Errorf("no NGN balance: %v", bal)
		}
		two := `mutation { ...Both } fragment Both on Mutation {
			withdraw(input: {amount: "10", currency: "NGN", beneficiary: {email: "ada@example.com", bank: "058", accountName: "Ada Obi", accountNumber: "0123456789"}}) { reference }
			again: withdraw(input: {amount: "10", currency: "NGN", beneficiary: {email: "ada@example.com", bank: "058", accountName: "Ada Obi", accountNumber: "0123456789"}}) { reference } }`
		if r := e.GQL(m.TestSecret, two, nil, "Idempotency-Key", "gql-two"); r.Code() != "VALIDATION_ERROR" {
			t.Errorf("two mutations through a fragment: %s", r.Body)
		}
	})
}
