package server_test

import (
	"net/http"
	"net/url"

	"merchantpay/server/servertest"
)

// parityDashboardRows are the rows of the dashboard's operations: the
// balance history, on both transports, and those GraphQL alone has.
func parityDashboardRows(e *servertest.Env) []parityRow {
	vars := func(_ *parityParty, in map[string]any) map[string]any { return in }
	endpoint := func(p *parityParty) {
		d := p.restCall(http.MethodPost, "/webhooks", map[string]any{"url": "https://hooks.example/a"})
		p.vals["endpoint"] = d["data"].(map[string]any)["id"].(string)
	}
	return []parityRow{
		{
			name: "balance history", routes: []string{"GET /balances/{currency}/history"}, fields: []string{"balanceHistory"},
			setup: func(p *parityParty) { parFund(p, "NGN", "300"); parFund(p, "NGN", "200.25"); parFund(p, "USDT", "3") },
			input: func(*parityParty) map[string]any { return map[string]any{"currency": "NGN", "first": 5} },
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodGet, parQuery("/balances/"+url.PathEscape(parityString(in["currency"]))+"/history", in,
					map[string]string{"first": "limit", "after": "cursor"}), nil
			},
			gql: `query($currency: String!, $first: Int, $after: String) { balanceHistory(currency: $currency, first: $first, after: $after) {
				edges { node { amount balanceAfter currency transactionReference description } } } }`,
			vars:       vars,
			result:     parityEdges("balanceHistory"),
			compare:    []string{"amount", "balanceAfter", "currency", "transactionReference", "description"},
			restFields: parRenamer(map[string]string{"limit": "first", "cursor": "after"}, ""),
			bad: []parityBad{
				{name: "unknown currency", edit: parSet("currency", "EUR"), code: "VALIDATION_ERROR", fields: []string{"currency"}},
				{name: "zero", edit: parSet("first", 0), code: "VALIDATION_ERROR", fields: []string{"first"}},
				{name: "bad cursor", edit: parSet("after", "garbage"), code: "VALIDATION_ERROR", fields: []string{"after"}},
			},
		},
		{
			name: "webhook deliveries", fields: []string{"webhookDeliveries"},
			setup: endpoint,
			input: func(p *parityParty) map[string]any {
				return map[string]any{"endpointId": p.vals["endpoint"], "first": 5}
			},
			gql: `query($endpointId: ID, $first: Int, $after: String) { webhookDeliveries(endpointId: $endpointId, first: $first, after: $after) {
				edges { node { id event status attempts { number } } } } }`,
			vars: vars,
			bad: []parityBad{
				{name: "zero", edit: parSet("first", 0), code: "VALIDATION_ERROR", fields: []string{"first"}},
				{name: "bad cursor", edit: parSet("after", "garbage"), code: "VALIDATION_ERROR", fields: []string{"after"}},
			},
		},
		{
			name: "api keys", fields: []string{"apiKeys"},
			input: func(*parityParty) map[string]any { return nil },
			gql:   `{ apiKeys { id kind mode prefix createdAt lastUsedAt expiresAt } }`, vars: vars,
		},
		{
			name: "volume today", fields: []string{"volumeToday"},
			input: func(*parityParty) map[string]any { return nil },
			gql:   `{ volumeToday { currency incoming outgoing count } }`, vars: vars,
		},
		{
			// With an overlap, so that the party's key keeps working for
			// the refusals that follow.
			name: "roll api keys", fields: []string{"rollApiKeys"},
			input: func(*parityParty) map[string]any { return map[string]any{"overlapSeconds": 600} },
			gql:   `mutation($input: RollApiKeysInput) { rollApiKeys(input: $input) { secretKey publicKey oldKeysExpireAt } }`,
			bad: []parityBad{
				{name: "over a day", edit: parSet("overlapSeconds", 86401), code: "VALIDATION_ERROR", fields: []string{"overlapSeconds"}},
				{name: "negative", edit: parSet("overlapSeconds", -1), code: "VALIDATION_ERROR", fields: []string{"overlapSeconds"}},
			},
		},
		{
			name: "transaction export", fields: []string{"createTransactionExport"},
			input: func(*parityParty) map[string]any { return map[string]any{"filter": map[string]any{"type": "DEPOSIT"}} },
			gql:   `mutation($filter: TransactionFilter) { createTransactionExport(filter: $filter) { url expiresAt } }`,
			vars:  vars,
			bad: []parityBad{
				{name: "unknown currency", edit: parSetIn("filter", "currency", "EUR"), code: "VALIDATION_ERROR", fields: []string{"filter.currency"}},
				{name: "empty search", edit: parSetIn("filter", "search", ""), code: "VALIDATION_ERROR", fields: []string{"filter.search"}},
			},
		},
		{
			name: "test webhook", fields: []string{"sendTestWebhook"},
			setup: endpoint,
			input: func(p *parityParty) map[string]any { return map[string]any{"endpointId": p.vals["endpoint"]} },
			gql:   `mutation($endpointId: ID!) { sendTestWebhook(endpointId: $endpointId) { id event status } }`,
			vars:  vars,
			bad:   []parityBad{{name: "unknown endpoint", edit: parSet("endpointId", "we_nope"), code: "NOT_FOUND"}},
		},
		{
			name: "endpoint update", fields: []string{"updateWebhookEndpoint"},
			setup: endpoint,
			input: func(p *parityParty) map[string]any { return map[string]any{"id": p.vals["endpoint"], "enabled": false} },
			gql:   `mutation($id: ID!, $enabled: Boolean!) { updateWebhookEndpoint(id: $id, enabled: $enabled) { id enabled } }`,
			vars:  vars,
			bad:   []parityBad{{name: "unknown endpoint", edit: parSet("id", "we_nope"), code: "NOT_FOUND"}},
		},
		{
			name: "delivery resend", fields: []string{"resendWebhookDelivery"},
			setup: func(p *parityParty) {
				endpoint(p)
				d := p.gqlCall(`mutation($id: ID!) { sendTestWebhook(endpointId: $id) { id } }`, map[string]any{"id": p.vals["endpoint"]})
				p.vals["delivery"] = d["sendTestWebhook"].(map[string]any)["id"].(string)
			},
			input: func(p *parityParty) map[string]any { return map[string]any{"id": p.vals["delivery"]} },
			gql:   `mutation($id: ID!) { resendWebhookDelivery(id: $id) { id status } }`,
			vars:  vars,
			bad:   []parityBad{{name: "unknown delivery", edit: parSet("id", "dlv_nope"), code: "NOT_FOUND"}},
		},
	}
}
