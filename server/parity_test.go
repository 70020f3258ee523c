package server_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/testdb"
	"merchantpay/rest"
	"merchantpay/server/servertest"
)

// Operations that exist over GraphQL only, and why REST has no route. (The
// events subscription, over WebSocket, is GraphQL's alone as well; it is
// no operation of the table.) No operation exists over REST only.
var graphQLOnly = map[string]string{
	"me":             "the key's merchant; REST clients know whose key they hold",
	"events":         "stored events; REST clients receive them as webhooks",
	"enrolCryptoPay": "crypto-pay enrolment is done from the dashboard",
	"redeliverEvent": "webhook redelivery is done from the dashboard",
	// The dashboard's own operations.
	"webhookDeliveries":       "deliveries are read in the dashboard; REST clients receive them",
	"apiKeys":                 "keys are managed from the dashboard",
	"volumeToday":             "a dashboard figure",
	"rollApiKeys":             "keys are rolled from the dashboard or the CLI",
	"createTransactionExport": "the CSV export is the dashboard's",
	"sendTestWebhook":         "test webhooks are sent from the dashboard",
	"updateWebhookEndpoint":   "endpoints are disabled and enabled from the dashboard",
	"resendWebhookDelivery":   "resending one delivery is done from the dashboard",
}

// Every operation through REST and through GraphQL: the same effect for the
// same input, and the same refusal (code and fields) for the same bad input.
func TestParity(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		rows := parityRows(t, e)
		for i, row := range rows {
			t.Run(row.name, func(t *testing.T) { runParityRow(t, e, row, i) })
		}
	})
}

// The table has a row for every REST route and every GraphQL root field: a
// route or field added without one fails here.
func TestParityCoversEveryOperation(t *testing.T) {
	e := servertest.New(t, testdb.MigratedSQLiteURL(t), servertest.WithoutWorkers())
	rows := parityRows(t, e)
	routes, fields := map[string]bool{}, map[string]bool{}
	for _, row := range rows {
		for _, r := range row.routes {
			routes[r] = true
		}
		for _, f := range row.fields {
			fields[f] = true
			if _, only := graphQLOnly[f]; row.routes == nil && !only {
				t.Errorf("row %q names no REST route, but %s is not listed as GraphQL only", row.name, f)
			}
		}
		if len(row.fields) == 0 {
			t.Errorf("row %q names no GraphQL field", row.name)
		}
	}
	for _, r := range rest.RouteTable() {
		if !routes[r] {
			t.Errorf("REST route %s has no parity row", r)
		}
	}
	m := e.Merchant("Parity Coverage")
	d := e.GQL(m.TestSecret, `{ __schema { queryType { fields { name } } mutationType { fields { name } } } }`, nil).GQLData()
	schema := d["__schema"].(map[string]any)
	for _, root := range []string{"queryType", "mutationType"} {
		for _, f := range schema[root].(map[string]any)["fields"].([]any) {
			name := f.(map[string]any)["name"].(string)
			if strings.HasPrefix(name, "__") {
				continue
			}
			if !fields[name] {
				t.Errorf("GraphQL %s field %s has no parity row", root, name)
			}
			if _, only := graphQLOnly[name]; only && parityRowOf(rows, name).routes != nil {
				t.Errorf("%s is listed as GraphQL only but its row names REST routes", name)
			}
		}
	}
}

func parityRowOf(rows []parityRow, field string) parityRow {
	for _, r := range rows {
		if slices.Contains(r.fields, field) {
			return r
		}
	}
	return parityRow{}
}

// parityGHBank is a Ghanaian bank code with one of its branches.
type parityGHBank struct{ bank, branch string }

func parityGhanaBank(t *testing.T, e *servertest.Env) parityGHBank {
	t.Helper()
	m := e.Merchant("Parity Banks")
	d := e.GQL(m.TestSecret, `{ banks(country: GH) { code branches { branchCode } } }`, nil).GQLData()
	for _, b := range d["banks"].([]any) {
		b := b.(map[string]any)
		if brs, _ := b["branches"].([]any); len(brs) > 0 {
			return parityGHBank{bank: b["code"].(string), branch: brs[0].(map[string]any)["branchCode"].(string)}
		}
	}
	t.Fatal("no Ghanaian bank with branches")
	return parityGHBank{}
}

// Inputs shared by several rows, in GraphQL naming.

func parityCompliance() map[string]any {
	return map[string]any{"phone": "+2348031234567", "firstname": "Ada", "lastname": "Obi", "email": "ada@example.com",
		"documents": []any{map[string]any{"documentType": "INTERNATIONAL_PASSPORT", "documentFile": "https://files.example/p.pdf",
			"documentFileType": "url", "documentNo": "A1234567"}}}
}

func parityNGBeneficiary() map[string]any {
	return map[string]any{"email": "ada@example.com", "phone": "+2348031234567", "bank": "058",
		"accountName": "Ada Obi", "accountNumber": "0123456789"}
}

func parityGHBeneficiary(gh parityGHBank) map[string]any {
	return map[string]any{"email": "kofi@example.com", "phone": "+233241234567", "country": "GH", "bank": gh.bank,
		"branch": gh.branch, "accountName": "Kofi Mensah", "accountNumber": "1234567890123", "accountType": "individual"}
}

func parFund(p *parityParty, currency, amount string) {
	p.t.Helper()
	p.restCall(http.MethodPost, "/sandbox/balances/fund", map[string]any{"currency": currency, "amount": parityNum(amount)})
}

func parWallet(p *parityParty, ref string) {
	p.t.Helper()
	in := parityToREST(map[string]any{"walletReference": ref, "compliance": parityCompliance()})
	p.restCall(http.MethodPost, "/wallets", in)
	// Lists are newest first; wallets made in the same instant would come
	// in an order of their random ids.
	p.e.Clock.Advance(time.Millisecond)
}

func parQuote(p *parityParty, in map[string]any) string {
	p.t.Helper()
	return p.restCall(http.MethodPost, "/rates/create", parityToREST(in))["data"].(map[string]any)["reference"].(string)
}

func parGlobalAccount(p *parityParty) string {
	p.t.Helper()
	d := p.restCall(http.MethodPost, "/accounts", map[string]any{"account_type": "static_dynamic", "currency": "NGN"})
	return d["data"].(map[string]any)["account_number"].(string)
}

func parEnrol(p *parityParty) {
	p.t.Helper()
	p.gqlCall(`mutation { enrolCryptoPay(input: {businessName: "Parity", logoUrl: "https://a.example/l.png", website: "https://a.example",
		successUrl: "https://a.example/ok", failureUrl: "https://a.example/ko"}) { status } }`, nil)
}

func parSet(key string, v any) func(*parityParty, map[string]any) {
	return func(_ *parityParty, in map[string]any) { in[key] = v }
}

func parDel(key string) func(*parityParty, map[string]any) {
	return func(_ *parityParty, in map[string]any) { delete(in, key) }
}

// setIn sets a field of a nested input object.
func parSetIn(obj, key string, v any) func(*parityParty, map[string]any) {
	return func(_ *parityParty, in map[string]any) {
		if v == nil {
			delete(in[obj].(map[string]any), key)
			return
		}
		in[obj].(map[string]any)[key] = v
	}
}

// query writes a REST query string from the non-null values of in, named
// by names (GraphQL name → REST parameter).
func parQuery(path string, in map[string]any, names map[string]string) string {
	q := url.Values{}
	for g, r := range names {
		if v, ok := in[g]; ok && v != nil {
			q.Set(r, parityString(v))
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// renamer maps REST's names of query parameters (or of a flatter body) to
// GraphQL's.
func parRenamer(names map[string]string, prefix string) func(string) string {
	return func(f string) string {
		if g, ok := names[f]; ok {
			return g
		}
		return prefix + parityCamel(f)
	}
}

var parityTxFields = []string{"type", "purpose", "status", "fromAmount", "amount", "amountCharged", "amountSettled",
	"currency", "fromCurrency", "toAmount", "toCurrency", "trxRate", "channel", "narration", "feeBearer", "fee",
	"merchantReference", "destination", "beneficiary", "settlementTime"}

var parityQuoteFields = []string{"fromCurrency", "toCurrency", "fromAmount", "toAmount", "fee", "feeType", "rate",
	"transactionType", "depositMethod", "withdrawalMethod", "fiat", "asset", "used", "settlementTime"}

const parityTxSelection = `reference type purpose status fromAmount amount amountCharged amountSettled currency fromCurrency
	toAmount toCurrency trxRate channel narration feeBearer fee merchantReference destination beneficiary settlementTime`

const parityQuoteSelection = `reference fromCurrency toCurrency fromAmount toAmount fee feeType rate transactionType depositMethod
	withdrawalMethod fiat asset used settlementTime`
