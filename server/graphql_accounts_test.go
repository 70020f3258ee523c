package server_test

import (
	"strings"
	"testing"

	"merchantpay/server/servertest"
)

func TestGraphQLAccountsAndBanks(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		create := `mutation($in: CreateWalletInput!) { createWallet(input: $in) { walletReference accounts { accountType accountNumber amount } } }`
		w := e.GQL(m.TestSecret, create, map[string]any{"in": map[string]any{
			"walletReference": "gw-1",
			"compliance": map[string]any{"phone": "08012345678", "firstname": "Ada", "lastname": "Obi", "email": "ada@example.com",
				"documents": []any{map[string]any{"documentType": "NIN", "documentFile": "https://x.example/nin.png", "documentFileType": "url", "documentNo": "123"}}},
			"account": map[string]any{"accountType": "STATIC", "currency": "NGN"},
		}}).GQLData()["createWallet"].(map[string]any)
		accs := w["accounts"].([]any)
		if len(accs) != 1 || accs[0].(map[string]any)["accountType"] != "STATIC" {
			t.Fatalf("inline account: %v", w)
		}
		dyn := e.GQL(m.TestSecret, `mutation { createFiatAccount(input: {walletReference: "gw-1", account: {accountType: DYNAMIC, currency: "NGN", amount: "2500.50", expiresAt: 30}}) {
			accountType accountReference amount expiresAt accountNumber walletReference type } }`, nil).GQLData()["createFiatAccount"].(map[string]any)
		if dyn["amount"] != "2500.5" || dyn["type"] != "FIAT" || dyn["walletReference"] != "gw-1" || dyn["expiresAt"] == nil {
			t.Errorf("dynamic: %v", dyn)
		}
		// REST sees the same account.
		rest := e.REST("GET", "/wallets/gw-1", m.TestSecret, nil).Expect(200).Data()
		if n := len(rest["accounts"].([]any)); n != 2 {
			t.Errorf("REST lists %d accounts", n)
		}
		bad := e.GQL(m.TestSecret, `mutation { createFiatAccount(input: {walletReference: "gw-1", account: {accountType: DYNAMIC, currency: "GHS"}}) { accountNumber } }`, nil)
		// The account's fields are named as the input nests them, as
		// createWallet names its inline account's.
		body := string(bad.Body)
		if bad.Code() != "VALIDATION_ERROR" || !strings.Contains(body, `"field":"account.currency"`) ||
			!strings.Contains(body, `"field":"account.expiresAt"`) || strings.Contains(body, `"field":"currency"`) {
			t.Errorf("bad account: %s", body)
		}
		global := e.GQL(m.TestSecret, `mutation { createFiatAccount(input: {account: {accountType: STATIC_DYNAMIC, currency: "NGN"}}) { accountType walletReference accountNumber } }`, nil).GQLData()
		g := global["createFiatAccount"].(map[string]any)
		if g["walletReference"] != nil || g["accountType"] != "STATIC_DYNAMIC" {
			t.Errorf("global: %v", g)
		}
		// A deposit's event carries its transaction: with the wallet's
		// reference, or null for an account of no wallet.
		toWallet := depositTo(t, e, m.TestSecret, accs[0].(map[string]any)["accountNumber"].(string), "100")
		toGlobal := depositTo(t, e, m.TestSecret, g["accountNumber"].(string), "50")
		evs := e.GQL(m.TestSecret, `{ events(first: 10) { edges { node { event transaction { reference walletReference } } } } }`, nil).GQLData()
		wallets := map[string]any{}
		for _, edge := range evs["events"].(map[string]any)["edges"].([]any) {
			tx := edge.(map[string]any)["node"].(map[string]any)["transaction"].(map[string]any)
			wallets[tx["reference"].(string)] = tx["walletReference"]
		}
		if w, ok := wallets[toWallet]; !ok || w != "gw-1" {
			t.Errorf("deposit to the wallet's account: %v", evs)
		}
		if w, ok := wallets[toGlobal]; !ok || w != nil {
			t.Errorf("deposit to the global account: %v", evs)
		}
		ng := e.GQL(m.TestSecret, `{ banks(country: NG) { name code slug country } }`, nil).GQLData()["banks"].([]any)
		gh := e.GQL(m.TestSecret, `{ banks(country: GH) { id code name branches { id branchCode bankId } } }`, nil).GQLData()["banks"].([]any)
		if len(ng) != 98 || len(gh) != 23 {
			t.Errorf("banks: %d NG, %d GH", len(ng), len(gh))
		}
		res := e.GQL(m.TestSecret, `mutation { resolveBankAccount(input: {bank: "058", account: "0123456789"}) { bankName bankCode accountNumber accountName } }`, nil).GQLData()["resolveBankAccount"].(map[string]any)
		restRes := e.REST("POST", "/misc/banks/resolve", m.TestSecret, map[string]any{"bank": "058", "account": "0123456789"}).Expect(200).Data()
		if res["accountName"] != restRes["account_name"] || res["bankName"] != restRes["bank_name"] {
			t.Errorf("resolve parity: %v vs %v", res, restRes)
		}
		if r := e.GQL(m.TestSecret, `mutation { resolveBankAccount(input: {bank: "058", account: "0000000000"}) { accountName } }`, nil); r.Code() != "ACCOUNT_NOT_RESOLVED" {
			t.Errorf("unresolved: %s", r.Body)
		}
	})
}
