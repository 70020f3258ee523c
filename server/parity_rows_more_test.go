package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"merchantpay/server/servertest"
)

// parityMoreRows are the rows of deposits, transactions, balances, banks,
// webhooks and the operations GraphQL alone has.
func parityMoreRows(e *servertest.Env) []parityRow {
	filterNames := map[string]string{"limit": "first", "cursor": "after", "type": "filter.type", "status": "filter.status",
		"currency": "filter.currency", "search": "filter.search", "created_from": "filter.createdFrom", "created_to": "filter.createdTo"}
	idVars := func(_ *parityParty, in map[string]any) map[string]any { return in }
	deposit := func(p *parityParty) {
		p.vals["account"] = parGlobalAccount(p)
		p.restCall(http.MethodPost, "/sandbox/deposits/bank-transfer", map[string]any{"account_number": p.vals["account"],
			"amount": 5000, "narration": "pay !!inv-1!!"})
	}
	endpoint := func(p *parityParty, u string) string {
		d := p.restCall(http.MethodPost, "/webhooks", map[string]any{"url": u, "events": []string{"deposit.success"}})
		p.e.Clock.Advance(time.Millisecond)
		return d["data"].(map[string]any)["id"].(string)
	}
	startCryptoPay := func(p *parityParty) {
		parEnrol(p)
		d := p.restCall(http.MethodPost, "/transactions/deposit", parityToREST(map[string]any{"depositMethod": "crypto-pay",
			"requirement": map[string]any{"productName": "Shoes"}, "amount": "25", "currency": "USDT", "reference": "dep-1"}))
		p.vals["prepay"] = d["data"].(map[string]any)["prepayId"].(string)
	}
	return []parityRow{
		{
			name: "fund balance", routes: []string{"POST /sandbox/balances/fund"}, fields: []string{"fundBalance"}, restPath: "/sandbox/balances/fund",
			input:   func(*parityParty) map[string]any { return map[string]any{"currency": "NGN", "amount": "2500.5"} },
			gql:     `mutation($input: FundBalanceInput!) { fundBalance(input: $input) { currency available pending } }`,
			compare: []string{"currency", "available", "pending"},
			bad: []parityBad{
				{name: "negative", edit: parSet("amount", "-5"), code: "VALIDATION_ERROR", fields: []string{"amount"}},
				{name: "not a number", edit: parSet("amount", "much"), code: "VALIDATION_ERROR", fields: []string{"amount"}},
				{name: "unknown currency", edit: parSet("currency", "EUR"), code: "VALIDATION_ERROR", fields: []string{"currency"}},
				{name: "no currency", edit: parDel("currency"), code: "VALIDATION_ERROR", fields: []string{"currency"}},
			},
		},
		{
			name: "balances", routes: []string{"GET /balances"}, fields: []string{"balances"},
			setup: func(p *parityParty) { parFund(p, "USDT", "12.5"); parFund(p, "NGN", "300") },
			input: func(*parityParty) map[string]any { return map[string]any{} },
			rest:  func(*parityParty, map[string]any) (string, string, any) { return http.MethodGet, "/balances", nil },
			gql:   `{ balances { currency available pending } }`, vars: func(*parityParty, map[string]any) map[string]any { return nil },
			compare: []string{"currency", "available", "pending"},
		},
		{
			name: "bank transfer", routes: []string{"POST /sandbox/deposits/bank-transfer"}, fields: []string{"simulateBankTransfer"},
			restPath: "/sandbox/deposits/bank-transfer",
			setup:    func(p *parityParty) { p.vals["account"] = parGlobalAccount(p) },
			input: func(p *parityParty) map[string]any {
				return map[string]any{"accountNumber": p.vals["account"], "amount": "5000", "narration": "pay !!inv-1!!", "senderName": "Ada Obi"}
			},
			gql:     `mutation($input: SimulateBankTransferInput!) { simulateBankTransfer(input: $input) { ` + parityTxSelection + ` } }`,
			compare: parityTxFields,
			bad: []parityBad{
				{name: "unknown account", edit: parSet("accountNumber", "0000000000"), code: "NOT_FOUND"},
				{name: "zero", edit: parSet("amount", "0"), code: "VALIDATION_ERROR", fields: []string{"amount"}},
				{name: "not a number", edit: parSet("amount", "much"), code: "VALIDATION_ERROR", fields: []string{"amount"}},
				{name: "no account", edit: parDel("accountNumber"), code: "VALIDATION_ERROR", fields: []string{"accountNumber"}},
			},
		},
		{
			name: "transaction get", routes: []string{"GET /transactions/{reference}"}, fields: []string{"transaction"},
			setup: deposit,
			input: func(*parityParty) map[string]any { return map[string]any{"reference": "INV-1"} },
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodGet, "/transactions/" + url.PathEscape(parityString(in["reference"])), nil
			},
			gql:     `query($reference: String!) { transaction(reference: $reference) { ` + parityTxSelection + ` } }`,
			vars:    idVars,
			compare: parityTxFields,
			bad:     []parityBad{{name: "unknown", edit: parSet("reference", "nope"), nullOverGraphQL: true}},
		},
		{
			name: "transaction list", routes: []string{"GET /transactions"}, fields: []string{"transactions"},
			setup: func(p *parityParty) { deposit(p); parFund(p, "NGN", "100") },
			input: func(*parityParty) map[string]any {
				return map[string]any{"first": 5, "filter": map[string]any{"type": "DEPOSIT", "status": "SUCCESS", "currency": "NGN",
					"createdFrom": "2000-01-01T00:00:00Z"}}
			},
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				q := map[string]any{"first": in["first"], "after": in["after"]}
				if f, ok := in["filter"].(map[string]any); ok {
					// REST takes the type as GraphQL writes it, the status in
					// lower case.
					q["type"] = f["type"]
					if v, ok := f["status"].(string); ok {
						q["status"] = strings.ToLower(v)
					}
					q["currency"], q["search"], q["createdFrom"], q["createdTo"] = f["currency"], f["search"], f["createdFrom"], f["createdTo"]
				}
				return http.MethodGet, parQuery("/transactions", q, map[string]string{"first": "limit", "after": "cursor", "type": "type", "status": "status",
					"currency": "currency", "search": "search", "createdFrom": "created_from", "createdTo": "created_to"}), nil
			},
			gql: `query($first: Int, $after: String, $filter: TransactionFilter) { transactions(first: $first, after: $after, filter: $filter) {
				edges { node { ` + parityTxSelection + ` } } } }`,
			vars:       idVars,
			result:     parityEdges("transactions"),
			compare:    parityTxFields,
			restFields: parRenamer(filterNames, ""),
			bad: []parityBad{
				{name: "unknown type", edit: func(_ *parityParty, in map[string]any) { in["filter"].(map[string]any)["type"] = "GIFT" },
					code: "VALIDATION_ERROR", fields: []string{"filter.type"}},
				{name: "unknown status", edit: func(_ *parityParty, in map[string]any) { in["filter"].(map[string]any)["status"] = "LOST" },
					code: "VALIDATION_ERROR", fields: []string{"filter.status"}},
				{name: "unknown currency and empty range", edit: func(_ *parityParty, in map[string]any) {
					f := in["filter"].(map[string]any)
					f["currency"], f["createdTo"] = "EUR", "1999-01-01T00:00:00Z"
				}, code: "VALIDATION_ERROR", fields: []string{"filter.currency", "filter.createdTo"}},
				{name: "zero", edit: parSet("first", 0), code: "VALIDATION_ERROR", fields: []string{"first"}},
				{name: "bad cursor", edit: parSet("after", "garbage"), code: "VALIDATION_ERROR", fields: []string{"after"}},
			},
		},
		{
			name: "banks", routes: []string{"GET /misc/banks"}, fields: []string{"banks"},
			input: func(*parityParty) map[string]any { return map[string]any{"country": "GH"} },
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodGet, parQuery("/misc/banks", in, map[string]string{"country": "country"}), nil
			},
			// Ghanaian banks have an id and branches, Nigerian ones a slug
			// and a country (the next row).
			gql:     `query($country: Country!) { banks(country: $country) { name code id branches { id branchCode branchName swiftCode bic bankId } } }`,
			vars:    idVars,
			compare: []string{"name", "code", "id", "branches"},
			bad: []parityBad{
				{name: "unknown country", edit: parSet("country", "XX"), code: "VALIDATION_ERROR", fields: []string{"country"}},
				{name: "no country", edit: parDel("country"), code: "VALIDATION_ERROR", fields: []string{"country"}},
			},
		},
		{
			name: "banks NG", routes: []string{"GET /misc/banks"}, fields: []string{"banks"},
			input: func(*parityParty) map[string]any { return map[string]any{"country": "NG"} },
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodGet, parQuery("/misc/banks", in, map[string]string{"country": "country"}), nil
			},
			gql:     `query($country: Country!) { banks(country: $country) { name code slug country } }`,
			vars:    idVars,
			compare: []string{"name", "code", "slug", "country"},
		},
		{
			name: "bank resolve", routes: []string{"POST /misc/banks/resolve"}, fields: []string{"resolveBankAccount"}, restPath: "/misc/banks/resolve",
			input:   func(*parityParty) map[string]any { return map[string]any{"bank": "058", "account": "0123456789"} },
			gql:     `mutation($input: ResolveBankAccountInput!) { resolveBankAccount(input: $input) { bankName bankCode accountNumber accountName } }`,
			compare: []string{"bankName", "bankCode", "accountNumber", "accountName"},
			bad: []parityBad{
				{name: "unknown bank", edit: parSet("bank", "999999"), code: "UNKNOWN_BANK", fields: []string{"bank"}},
				{name: "short account", edit: parSet("account", "12"), code: "VALIDATION_ERROR", fields: []string{"account"}},
				{name: "no account", edit: parDel("account"), code: "VALIDATION_ERROR", fields: []string{"account"}},
			},
		},
		{
			name: "crypto-pay deposit", routes: []string{"POST /transactions/deposit"}, fields: []string{"startDeposit"}, live: true,
			restPath: "/transactions/deposit",
			setup:    parEnrol,
			input: func(*parityParty) map[string]any {
				return map[string]any{"depositMethod": "crypto-pay", "requirement": map[string]any{"productName": "Shoes", "productDescription": "Red"},
					"amount": "25", "currency": "USDT", "reference": "dep-1", "feeBearer": "MERCHANT"}
			},
			gql: `mutation($input: StartDepositInput!) { startDeposit(input: $input) { links { terminalType productName productDescription
				successUrl failureUrl merchantReference } } }`,
			result:  func(d map[string]any) any { return d["startDeposit"].(map[string]any)["links"] },
			compare: []string{"terminalType", "productName", "productDescription", "successUrl", "failureUrl", "merchantReference"},
			bad: []parityBad{
				{name: "used reference", edit: func(*parityParty, map[string]any) {}, code: "DUPLICATE_REFERENCE", fields: []string{"reference"}},
				{name: "no requirement", edit: func(_ *parityParty, in map[string]any) { delete(in, "requirement"); in["reference"] = "dep-2" },
					code: "VALIDATION_ERROR", fields: []string{"requirement"}},
				{name: "zero", edit: func(_ *parityParty, in map[string]any) { in["amount"] = "0"; in["reference"] = "dep-2" },
					code: "VALIDATION_ERROR", fields: []string{"amount"}},
				{name: "other method", edit: func(_ *parityParty, in map[string]any) { in["depositMethod"] = "card"; in["reference"] = "dep-2" },
					code: "VALIDATION_ERROR", fields: []string{"depositMethod"}},
				{name: "reference of a service reference's form", edit: parSet("reference", "DEP-0190b5a4-7c1e-7a00-8000-000000000000"),
					code: "VALIDATION_ERROR", fields: []string{"reference"}},
			},
		},
		{
			name: "crypto-pay completion", routes: []string{"POST /sandbox/deposits/crypto-pay/{prepayId}"}, fields: []string{"completeCryptoPay"}, live: true,
			setup: startCryptoPay,
			input: func(p *parityParty) map[string]any {
				return map[string]any{"prepayId": p.vals["prepay"], "outcome": "SUCCESS"}
			},
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				body := parityToREST(in).(map[string]any)
				delete(body, "prepay_id")
				return http.MethodPost, "/sandbox/deposits/crypto-pay/" + url.PathEscape(parityString(in["prepayId"])), body
			},
			gql:     `mutation($input: CompleteCryptoPayInput!) { completeCryptoPay(input: $input) { ` + parityTxSelection + ` } }`,
			compare: parityTxFields,
			bad: []parityBad{
				{name: "completed", edit: func(*parityParty, map[string]any) {}, code: "DUPLICATE_REFERENCE"},
				{name: "unknown checkout", edit: parSet("prepayId", "nope"), code: "NOT_FOUND"},
				{name: "unknown outcome", edit: parSet("outcome", "MAYBE"), code: "VALIDATION_ERROR", fields: []string{"outcome"}},
			},
		},
		{
			name: "webhook create", routes: []string{"POST /webhooks"}, fields: []string{"createWebhookEndpoint"}, restPath: "/webhooks",
			input: func(*parityParty) map[string]any {
				return map[string]any{"url": "https://hooks.example/a", "events": []any{"deposit.success", "withdrawal.failed"}}
			},
			gql:     `mutation($input: CreateWebhookEndpointInput!) { createWebhookEndpoint(input: $input) { secret endpoint { url events enabled } } }`,
			result:  func(d map[string]any) any { return d["createWebhookEndpoint"].(map[string]any)["endpoint"] },
			compare: []string{"url", "events", "enabled"},
			bad: []parityBad{
				{name: "not a URL", edit: parSet("url", "hooks"), code: "VALIDATION_ERROR", fields: []string{"url"}},
				{name: "unknown event", edit: parSet("events", []any{"deposit.success", "nope"}), code: "VALIDATION_ERROR", fields: []string{"events[1]"}},
				{name: "event of the wrong type", edit: parSet("events", []any{7}), code: "VALIDATION_ERROR", fields: []string{"events[0]"}},
				{name: "no URL", edit: parDel("url"), code: "VALIDATION_ERROR", fields: []string{"url"}},
			},
		},
		{
			name: "webhook list", routes: []string{"GET /webhooks"}, fields: []string{"webhookEndpoints"},
			setup: func(p *parityParty) { endpoint(p, "https://hooks.example/a"); endpoint(p, "https://hooks.example/b") },
			input: func(*parityParty) map[string]any { return map[string]any{} },
			rest:  func(*parityParty, map[string]any) (string, string, any) { return http.MethodGet, "/webhooks", nil },
			gql:   `{ webhookEndpoints { url events enabled } }`, vars: func(*parityParty, map[string]any) map[string]any { return nil },
			compare: []string{"url", "events", "enabled"},
		},
		{
			name: "webhook delete", routes: []string{"DELETE /webhooks/{id}"}, fields: []string{"deleteWebhookEndpoint"},
			setup: func(p *parityParty) { p.vals["endpoint"] = endpoint(p, "https://hooks.example/a") },
			input: func(p *parityParty) map[string]any { return map[string]any{"id": p.vals["endpoint"]} },
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodDelete, "/webhooks/" + url.PathEscape(parityString(in["id"])), nil
			},
			gql:     `mutation($id: ID!) { deleteWebhookEndpoint(id: $id) { id deleted } }`,
			vars:    idVars,
			compare: []string{"deleted"},
			bad: []parityBad{
				{name: "deleted", edit: func(*parityParty, map[string]any) {}, code: "NOT_FOUND"},
				{name: "unknown", edit: parSet("id", "nope"), code: "NOT_FOUND"},
			},
		},
		{
			name: "webhook secret roll", routes: []string{"POST /webhooks/{id}/roll-secret"}, fields: []string{"rollWebhookSecret"},
			setup: func(p *parityParty) { p.vals["endpoint"] = endpoint(p, "https://hooks.example/a") },
			input: func(p *parityParty) map[string]any { return map[string]any{"id": p.vals["endpoint"]} },
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodPost, "/webhooks/" + url.PathEscape(parityString(in["id"])) + "/roll-secret", nil
			},
			gql:  `mutation($id: ID!) { rollWebhookSecret(id: $id) { id secret } }`,
			vars: idVars,
			bad:  []parityBad{{name: "unknown", edit: parSet("id", "nope"), code: "NOT_FOUND"}},
		},
		// GraphQL alone has these (graphQLOnly says why): their rows check
		// the valid input and the refusals over GraphQL.
		{
			name: "me", fields: []string{"me"},
			input: func(*parityParty) map[string]any { return nil },
			gql:   `{ me { id name email mode } }`, vars: func(*parityParty, map[string]any) map[string]any { return nil },
		},
		{
			name: "events", fields: []string{"events"},
			setup: deposit,
			input: func(*parityParty) map[string]any { return map[string]any{"first": 10} },
			gql:   `query($first: Int, $after: String) { events(first: $first, after: $after) { edges { node { event } } } }`,
			vars:  idVars,
			bad: []parityBad{
				{name: "zero", edit: parSet("first", 0), code: "VALIDATION_ERROR", fields: []string{"first"}},
				{name: "bad cursor", edit: parSet("after", "garbage"), code: "VALIDATION_ERROR", fields: []string{"after"}},
			},
		},
		{
			name: "crypto-pay enrolment", fields: []string{"enrolCryptoPay"}, live: true,
			input: func(*parityParty) map[string]any {
				return map[string]any{"businessName": "Parity", "logoUrl": "https://a.example/l.png", "website": "https://a.example",
					"successUrl": "https://a.example/ok", "failureUrl": "https://a.example/ko"}
			},
			gql: `mutation($input: EnrolCryptoPayInput!) { enrolCryptoPay(input: $input) { status } }`,
			bad: []parityBad{
				{name: "not a URL", edit: parSet("website", "web"), code: "VALIDATION_ERROR", fields: []string{"website"}},
				{name: "no name", edit: parDel("businessName"), code: "VALIDATION_ERROR", fields: []string{"businessName"}},
			},
		},
		{
			name: "event redelivery", fields: []string{"redeliverEvent"},
			setup: func(p *parityParty) {
				endpoint(p, "https://hooks.example/a")
				deposit(p)
				d := p.gqlCall(`{ events(first: 1) { edges { node { id } } } }`, nil)
				p.vals["event"] = d["events"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)["id"].(string)
			},
			input: func(p *parityParty) map[string]any { return map[string]any{"id": p.vals["event"]} },
			gql:   `mutation($id: ID!) { redeliverEvent(id: $id) { status } }`,
			vars:  idVars,
			bad:   []parityBad{{name: "unknown", edit: parSet("id", "nope"), code: "NOT_FOUND"}},
		},
	}
}

// edgesOf picks the nodes of a connection.
func parityEdges(field string) func(map[string]any) any {
	return func(d map[string]any) any {
		var out []any
		for _, e := range d[field].(map[string]any)["edges"].([]any) {
			out = append(out, e.(map[string]any)["node"])
		}
		return out
	}
}
