package server_test

import (
	"net/http"
	"net/url"
	"testing"

	"merchantpay/server/servertest"
)

// parityRows is the table: one row per operation.
func parityRows(t *testing.T, e *servertest.Env) []parityRow {
	gh := parityGhanaBank(t, e)
	pageNames := map[string]string{"limit": "first", "cursor": "after"}
	accountRESTFields := parRenamer(nil, "account.")
	return append([]parityRow{
		{
			name: "wallet create", routes: []string{"POST /wallets"}, fields: []string{"createWallet"}, restPath: "/wallets",
			input: func(*parityParty) map[string]any {
				return map[string]any{"walletReference": "w-1", "compliance": parityCompliance()}
			},
			gql: `mutation($input: CreateWalletInput!) { createWallet(input: $input) { walletReference fullName
				compliance { phone firstname lastname email documents { documentType documentFile documentFileType documentNo } } } }`,
			compare: []string{"walletReference", "fullName", "compliance"},
			bad: []parityBad{
				{name: "used reference", edit: func(*parityParty, map[string]any) {}, code: "DUPLICATE_REFERENCE", fields: []string{"walletReference"}},
				{name: "missing email", edit: func(_ *parityParty, in map[string]any) {
					delete(in["compliance"].(map[string]any), "email")
					in["walletReference"] = "w-2"
				}, code: "VALIDATION_ERROR", fields: []string{"compliance.email"}},
				{name: "bad email and document type", edit: func(_ *parityParty, in map[string]any) {
					c := in["compliance"].(map[string]any)
					c["email"] = "nope"
					c["documents"].([]any)[0].(map[string]any)["documentType"] = "LIBRARY_CARD"
					in["walletReference"] = "w-2"
				}, code: "VALIDATION_ERROR", fields: []string{"compliance.email", "compliance.documents[0].documentType"}},
				{name: "email and document type missing", edit: func(_ *parityParty, in map[string]any) {
					c := in["compliance"].(map[string]any)
					delete(c, "email")
					delete(c["documents"].([]any)[0].(map[string]any), "documentType")
					in["walletReference"] = "w-2"
				}, code: "VALIDATION_ERROR", fields: []string{"compliance.email", "compliance.documents[0].documentType"}},
				{name: "document type missing", edit: func(_ *parityParty, in map[string]any) {
					delete(in["compliance"].(map[string]any)["documents"].([]any)[0].(map[string]any), "documentType")
					in["walletReference"] = "w-2"
				}, code: "VALIDATION_ERROR", fields: []string{"compliance.documents[0].documentType"}},
				{name: "reference of the wrong type", edit: parSet("walletReference", 42), code: "VALIDATION_ERROR", fields: []string{"walletReference"}},
				{name: "no compliance", edit: func(_ *parityParty, in map[string]any) { delete(in, "compliance"); in["walletReference"] = "w-2" },
					code: "VALIDATION_ERROR", fields: []string{"compliance"}},
			},
		},
		{
			name: "wallet get", routes: []string{"GET /wallets/{wallet_reference}"}, fields: []string{"wallet"},
			setup: func(p *parityParty) { parWallet(p, "w-1") },
			input: func(*parityParty) map[string]any { return map[string]any{"reference": "w-1"} },
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodGet, "/wallets/" + url.PathEscape(parityString(in["reference"])), nil
			},
			gql:     `query($reference: String!) { wallet(reference: $reference) { walletReference fullName compliance { email phone } accounts { accountType } } }`,
			vars:    func(_ *parityParty, in map[string]any) map[string]any { return in },
			compare: []string{"walletReference", "fullName", "compliance.email", "compliance.phone", "accounts"},
			bad: []parityBad{
				{name: "unknown wallet", edit: parSet("reference", "nope"), nullOverGraphQL: true},
			},
		},
		{
			name: "wallet list", routes: []string{"GET /wallets"}, fields: []string{"wallets"},
			setup: func(p *parityParty) { parWallet(p, "w-1"); parWallet(p, "w-2"); parWallet(p, "w-3") },
			input: func(*parityParty) map[string]any { return map[string]any{"first": 2} },
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodGet, parQuery("/wallets", in, map[string]string{"first": "limit", "after": "cursor"}), nil
			},
			gql:  `query($first: Int, $after: String) { wallets(first: $first, after: $after) { edges { node { walletReference fullName } } } }`,
			vars: func(_ *parityParty, in map[string]any) map[string]any { return in },
			result: func(d map[string]any) any {
				var out []any
				for _, e := range d["wallets"].(map[string]any)["edges"].([]any) {
					out = append(out, e.(map[string]any)["node"])
				}
				return out
			},
			compare:    []string{"walletReference", "fullName"},
			restFields: parRenamer(pageNames, ""),
			bad: []parityBad{
				{name: "zero", edit: parSet("first", 0), code: "VALIDATION_ERROR", fields: []string{"first"}},
				{name: "too many", edit: parSet("first", 1000), code: "VALIDATION_ERROR", fields: []string{"first"}},
				{name: "not a number", edit: parSet("first", "two"), code: "VALIDATION_ERROR", fields: []string{"first"}},
				{name: "bad cursor", edit: parSet("after", "garbage"), code: "VALIDATION_ERROR", fields: []string{"after"}},
			},
		},
		{
			name: "fiat account on a wallet", routes: []string{"POST /wallets/{wallet_reference}"}, fields: []string{"createFiatAccount"},
			setup: func(p *parityParty) { parWallet(p, "w-1") },
			input: func(*parityParty) map[string]any {
				return map[string]any{"walletReference": "w-1", "account": map[string]any{"accountType": "DYNAMIC",
					"accountReference": "acc-1", "currency": "NGN", "amount": "2500", "expiresAt": 30, "rejectAmountCriteria": "GREATER_THAN_ONLY"}}
			},
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodPost, "/wallets/" + url.PathEscape(parityString(in["walletReference"])), parityToREST(in["account"])
			},
			// The account's name begins with the merchant's, and the two
			// merchants' names differ.
			gql: `mutation($input: CreateFiatAccountInput!) { createFiatAccount(input: $input) { accountType accountReference currency amount
				bankName walletReference type } }`,
			compare:    []string{"accountType", "accountReference", "currency", "amount", "bankName", "walletReference", "type"},
			restFields: accountRESTFields,
			bad: []parityBad{
				{name: "used reference", edit: func(*parityParty, map[string]any) {}, code: "DUPLICATE_REFERENCE", fields: []string{"account.accountReference"}},
				{name: "unknown wallet", edit: parSet("walletReference", "nope"), code: "NOT_FOUND"},
				{name: "no amount", edit: parSetIn("account", "amount", nil), code: "VALIDATION_ERROR", fields: []string{"account.amount"}},
				{name: "negative amount", edit: parSetIn("account", "amount", "-5"), code: "VALIDATION_ERROR", fields: []string{"account.amount"}},
				{name: "amount not a number", edit: parSetIn("account", "amount", "lots"), code: "VALIDATION_ERROR", fields: []string{"account.amount"}},
				{name: "expiry out of range", edit: parSetIn("account", "expiresAt", 61), code: "VALIDATION_ERROR", fields: []string{"account.expiresAt"}},
				{name: "currency", edit: parSetIn("account", "currency", "GHS"), code: "VALIDATION_ERROR", fields: []string{"account.currency"}},
			},
		},
		{
			name: "global account", routes: []string{"POST /accounts"}, fields: []string{"createFiatAccount"},
			input: func(*parityParty) map[string]any {
				return map[string]any{"account": map[string]any{"accountType": "STATIC_DYNAMIC", "currency": "NGN"}}
			},
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodPost, "/accounts", parityToREST(in["account"])
			},
			// The account's name is the merchant's, and the two merchants'
			// names differ.
			gql:        `mutation($input: CreateFiatAccountInput!) { createFiatAccount(input: $input) { accountType currency amount bankName walletReference type } }`,
			compare:    []string{"accountType", "currency", "amount", "bankName", "walletReference", "type"},
			restFields: accountRESTFields,
			bad: []parityBad{
				{name: "not static_dynamic", edit: parSetIn("account", "accountType", "STATIC"), code: "VALIDATION_ERROR", fields: []string{"account.accountType"}},
				{name: "type of the wrong type", edit: parSetIn("account", "accountType", 7), code: "VALIDATION_ERROR", fields: []string{"account.accountType"}},
			},
		},
		{
			name: "rates", routes: []string{"GET /markets/rates"}, fields: []string{"rates"},
			input: func(*parityParty) map[string]any { return map[string]any{} },
			rest: func(*parityParty, map[string]any) (string, string, any) {
				return http.MethodGet, "/markets/rates", nil
			},
			gql:  `{ rates { pair buy { fiat asset fromCurrency toCurrency fee feeType rate market } sell { fiat asset fromCurrency toCurrency fee feeType rate market } } }`,
			vars: func(*parityParty, map[string]any) map[string]any { return nil },
			compare: []string{"pair", "buy.fiat", "buy.asset", "buy.fromCurrency", "buy.toCurrency", "buy.fee", "buy.feeType",
				"buy.rate", "buy.market", "sell.fromCurrency", "sell.toCurrency", "sell.fee", "sell.rate", "sell.market"},
		},
		{
			name: "rate", routes: []string{"GET /markets/rates"}, fields: []string{"rate"},
			input: func(*parityParty) map[string]any { return map[string]any{"fromCurrency": "NGN", "toCurrency": "USDT"} },
			rest: func(_ *parityParty, in map[string]any) (string, string, any) {
				return http.MethodGet, parQuery("/markets/rates", in, map[string]string{"fromCurrency": "from_currency", "toCurrency": "to_currency"}), nil
			},
			gql:     `query($fromCurrency: String!, $toCurrency: String!) { rate(fromCurrency: $fromCurrency, toCurrency: $toCurrency) { fiat asset fromCurrency toCurrency fee feeType rate market } }`,
			vars:    func(_ *parityParty, in map[string]any) map[string]any { return in },
			compare: []string{"fiat", "asset", "fromCurrency", "toCurrency", "fee", "feeType", "rate", "market"},
			bad: []parityBad{
				{name: "unknown pair", edit: func(_ *parityParty, in map[string]any) { in["fromCurrency"] = "USDT"; in["toCurrency"] = "BTC" }, code: "PAIR_NOT_SUPPORTED"},
				{name: "unknown currency", edit: parSet("toCurrency", "DOGE"), code: "VALIDATION_ERROR", fields: []string{"toCurrency"}},
				{name: "same currency", edit: parSet("toCurrency", "NGN"), code: "VALIDATION_ERROR", fields: []string{"toCurrency"}},
				{name: "empty currency", edit: parSet("fromCurrency", ""), code: "VALIDATION_ERROR", fields: []string{"fromCurrency"}},
			},
		},
		{
			name: "quote create", routes: []string{"POST /rates/create"}, fields: []string{"createRate"}, restPath: "/rates/create",
			input: func(*parityParty) map[string]any {
				return map[string]any{"fromCurrency": "NGN", "toCurrency": "USDT", "fromAmount": "16000", "transactionType": "SWAP"}
			},
			gql:     `mutation($input: CreateRateInput!) { createRate(input: $input) { ` + parityQuoteSelection + ` } }`,
			compare: parityQuoteFields,
			bad: []parityBad{
				{name: "both amounts", edit: parSet("toAmount", "10"), code: "VALIDATION_ERROR", fields: []string{"fromAmount", "toAmount"}},
				{name: "no amount", edit: parDel("fromAmount"), code: "VALIDATION_ERROR", fields: []string{"fromAmount", "toAmount"}},
				{name: "negative amount", edit: parSet("fromAmount", "-1"), code: "VALIDATION_ERROR", fields: []string{"fromAmount"}},
				{name: "amount not a number", edit: parSet("fromAmount", "much"), code: "VALIDATION_ERROR", fields: []string{"fromAmount"}},
				{name: "unknown pair", edit: func(_ *parityParty, in map[string]any) { in["fromCurrency"] = "USDT"; in["toCurrency"] = "BTC" }, code: "PAIR_NOT_SUPPORTED"},
				{name: "unknown currency", edit: parSet("toCurrency", "DOGE"), code: "VALIDATION_ERROR", fields: []string{"toCurrency"}},
				{name: "unknown transaction type", edit: parSet("transactionType", "GIFT"), code: "VALIDATION_ERROR", fields: []string{"transactionType"}},
				{name: "missing currency", edit: parDel("fromCurrency"), code: "VALIDATION_ERROR", fields: []string{"fromCurrency"}},
			},
		},
		{
			name: "quote refresh", routes: []string{"POST /rates/refresh"}, fields: []string{"refreshRate"}, restPath: "/rates/refresh",
			setup: func(p *parityParty) {
				p.vals["quote"] = parQuote(p, map[string]any{"fromCurrency": "NGN", "toCurrency": "USDT", "fromAmount": "16000"})
				parFund(p, "NGN", "20000")
				p.vals["used"] = parQuote(p, map[string]any{"fromCurrency": "NGN", "toCurrency": "USDT", "fromAmount": "1600"})
				p.restCall(http.MethodPost, "/transactions/swap", map[string]any{"rate_reference": p.vals["used"]})
			},
			input:   func(p *parityParty) map[string]any { return map[string]any{"reference": p.vals["quote"]} },
			gql:     `mutation($input: RefreshRateInput!) { refreshRate(input: $input) { ` + parityQuoteSelection + ` } }`,
			compare: parityQuoteFields,
			bad: []parityBad{
				{name: "used quote", edit: func(p *parityParty, in map[string]any) { in["reference"] = p.vals["used"] }, code: "RATE_USED"},
				{name: "unknown quote", edit: parSet("reference", "nope"), code: "NOT_FOUND", fields: []string{"reference"}},
				{name: "no reference", edit: parDel("reference"), code: "VALIDATION_ERROR", fields: []string{"reference"}},
				{name: "reference of the wrong type", edit: parSet("reference", 5), code: "VALIDATION_ERROR", fields: []string{"reference"}},
			},
		},
		{
			name: "swap", routes: []string{"POST /transactions/swap"}, fields: []string{"swap"}, restPath: "/transactions/swap",
			setup: func(p *parityParty) {
				parFund(p, "NGN", "20000")
				p.vals["quote"] = parQuote(p, map[string]any{"fromCurrency": "NGN", "toCurrency": "USDT", "fromAmount": "16000"})
				p.vals["big"] = parQuote(p, map[string]any{"fromCurrency": "NGN", "toCurrency": "USDT", "fromAmount": "160000"})
				p.vals["withdrawal"] = parQuote(p, map[string]any{"fromCurrency": "USDT", "toCurrency": "NGN", "fromAmount": "1", "transactionType": "WITHDRAWAL"})
			},
			input: func(p *parityParty) map[string]any {
				return map[string]any{"rateReference": p.vals["quote"], "reference": "sw-1"}
			},
			gql:     `mutation($input: SwapInput!) { swap(input: $input) { ` + parityTxSelection + ` } }`,
			compare: parityTxFields,
			bad: []parityBad{
				{name: "used quote", edit: parSet("reference", "sw-2"), code: "RATE_USED"},
				{name: "insufficient balance", edit: func(p *parityParty, in map[string]any) { in["rateReference"] = p.vals["big"]; in["reference"] = "sw-2" },
					code: "INSUFFICIENT_BALANCE"},
				{name: "withdrawal quote", edit: func(p *parityParty, in map[string]any) {
					in["rateReference"] = p.vals["withdrawal"]
					in["reference"] = "sw-2"
				},
					code: "RATE_TYPE_MISMATCH"},
				{name: "used reference", edit: func(p *parityParty, in map[string]any) { in["rateReference"] = p.vals["big"] }, code: "DUPLICATE_REFERENCE", fields: []string{"reference"}},
				{name: "unknown quote", edit: func(_ *parityParty, in map[string]any) { in["rateReference"] = "nope"; in["reference"] = "sw-2" }, code: "NOT_FOUND", fields: []string{"rateReference"}},
				{name: "no quote", edit: parDel("rateReference"), code: "VALIDATION_ERROR", fields: []string{"rateReference"}},
				{name: "reference of a service reference's form", edit: parSet("reference", "swp-0190B5A4-7C1E-7A00-8000-000000000000"),
					code: "VALIDATION_ERROR", fields: []string{"reference"}},
			},
		},
		withdrawRow("withdraw NGN direct", func(p *parityParty) { parFund(p, "NGN", "50000") }, func(*parityParty) map[string]any {
			return map[string]any{"beneficiary": parityNGBeneficiary(), "amount": "1000", "currency": "NGN", "reference": "pay-1",
				"narration": "rent", "feeBearer": "MERCHANT"}
		}, []parityBad{
			{name: "used reference", edit: func(*parityParty, map[string]any) {}, code: "DUPLICATE_REFERENCE", fields: []string{"reference"}},
			{name: "reference of a service reference's form", edit: parSet("reference", "Wth-0190b5a4-7c1e-7a00-8000-000000000000"),
				code: "VALIDATION_ERROR", fields: []string{"reference"}},
			{name: "insufficient balance", edit: func(_ *parityParty, in map[string]any) { in["amount"] = "1000000"; in["reference"] = "pay-2" }, code: "INSUFFICIENT_BALANCE"},
			{name: "unknown bank", edit: func(_ *parityParty, in map[string]any) {
				in["beneficiary"].(map[string]any)["bank"] = "999999"
				in["reference"] = "pay-2"
			}, code: "UNKNOWN_BANK", fields: []string{"beneficiary.bank"}},
			{name: "missing account name", edit: func(_ *parityParty, in map[string]any) {
				delete(in["beneficiary"].(map[string]any), "accountName")
				in["reference"] = "pay-2"
			}, code: "VALIDATION_ERROR", fields: []string{"beneficiary.accountName"}},
			{name: "no email, bank or account number", edit: func(_ *parityParty, in map[string]any) {
				b := in["beneficiary"].(map[string]any)
				delete(b, "email")
				delete(b, "bank")
				delete(b, "accountNumber")
				in["reference"] = "pay-2"
			}, code: "VALIDATION_ERROR", fields: []string{"beneficiary.accountNumber", "beneficiary.bank", "beneficiary.email"}},
			{name: "bad email and account number", edit: func(_ *parityParty, in map[string]any) {
				b := in["beneficiary"].(map[string]any)
				b["email"] = "nope"
				b["accountNumber"] = "12"
				in["reference"] = "pay-2"
			}, code: "VALIDATION_ERROR", fields: []string{"beneficiary.accountNumber", "beneficiary.email"}},
			{name: "zero amount", edit: func(_ *parityParty, in map[string]any) { in["amount"] = "0"; in["reference"] = "pay-2" }, code: "VALIDATION_ERROR", fields: []string{"amount"}},
			{name: "amount not a number", edit: func(_ *parityParty, in map[string]any) { in["amount"] = "lots"; in["reference"] = "pay-2" }, code: "VALIDATION_ERROR", fields: []string{"amount"}},
			{name: "unknown currency", edit: func(_ *parityParty, in map[string]any) { in["currency"] = "EUR"; in["reference"] = "pay-2" }, code: "VALIDATION_ERROR", fields: []string{"currency"}},
			{name: "amount and an unknown quote", edit: func(_ *parityParty, in map[string]any) { in["rateReference"] = "q"; in["reference"] = "pay-2" }, code: "NOT_FOUND", fields: []string{"rateReference"}},
			{name: "unknown fee bearer", edit: func(_ *parityParty, in map[string]any) { in["feeBearer"] = "NOBODY"; in["reference"] = "pay-2" }, code: "VALIDATION_ERROR", fields: []string{"feeBearer"}},
		}),
		withdrawRow("withdraw NGN cross", func(p *parityParty) {
			parFund(p, "USDT", "50")
			p.vals["quote"] = parQuote(p, map[string]any{"fromCurrency": "USDT", "toCurrency": "NGN", "fromAmount": "10", "transactionType": "WITHDRAWAL"})
			p.vals["swap"] = parQuote(p, map[string]any{"fromCurrency": "USDT", "toCurrency": "NGN", "fromAmount": "10"})
		}, func(p *parityParty) map[string]any {
			return map[string]any{"beneficiary": parityNGBeneficiary(), "rateReference": p.vals["quote"], "reference": "pay-1"}
		}, []parityBad{
			{name: "used quote", edit: parSet("reference", "pay-2"), code: "RATE_USED"},
			{name: "swap quote", edit: func(p *parityParty, in map[string]any) {
				in["rateReference"] = p.vals["swap"]
				in["reference"] = "pay-2"
			}, code: "RATE_TYPE_MISMATCH"},
			{name: "unknown quote", edit: func(_ *parityParty, in map[string]any) { in["rateReference"] = "nope"; in["reference"] = "pay-2" }, code: "NOT_FOUND", fields: []string{"rateReference"}},
		}),
		withdrawRow("withdraw GHS direct", func(p *parityParty) { parFund(p, "GHS", "5000") }, func(*parityParty) map[string]any {
			return map[string]any{"beneficiary": parityGHBeneficiary(gh), "amount": "100", "currency": "GHS", "reference": "pay-1", "feeBearer": "BENEFICIARY"}
		}, []parityBad{
			{name: "unknown branch", edit: func(_ *parityParty, in map[string]any) {
				in["beneficiary"].(map[string]any)["branch"] = "999999"
				in["reference"] = "pay-2"
			}, code: "UNKNOWN_BRANCH", fields: []string{"beneficiary.branch"}},
			{name: "no branch", edit: func(_ *parityParty, in map[string]any) {
				delete(in["beneficiary"].(map[string]any), "branch")
				in["reference"] = "pay-2"
			}, code: "VALIDATION_ERROR", fields: []string{"beneficiary.branch"}},
			{name: "NGN to a Ghanaian bank", edit: func(_ *parityParty, in map[string]any) { in["currency"] = "NGN"; in["reference"] = "pay-2" },
				code: "VALIDATION_ERROR", fields: []string{"beneficiary.accountNumber", "beneficiary.bank"}},
		}),
		withdrawRow("withdraw GHS cross", func(p *parityParty) {
			parFund(p, "USD", "500")
			p.vals["quote"] = parQuote(p, map[string]any{"fromCurrency": "USD", "toCurrency": "GHS", "toAmount": "1000", "transactionType": "WITHDRAWAL"})
		}, func(p *parityParty) map[string]any {
			return map[string]any{"beneficiary": parityGHBeneficiary(gh), "rateReference": p.vals["quote"], "reference": "pay-1"}
		}, []parityBad{
			{name: "used quote", edit: parSet("reference", "pay-2"), code: "RATE_USED"},
		}),
	}, append(parityMoreRows(e), parityDashboardRows(e)...)...)
}

func withdrawRow(name string, setup func(*parityParty), input func(*parityParty) map[string]any, bad []parityBad) parityRow {
	return parityRow{
		name: name, routes: []string{"POST /transactions/withdraw"}, fields: []string{"withdraw"}, restPath: "/transactions/withdraw",
		setup: setup, input: input, bad: bad,
		gql:     `mutation($input: WithdrawInput!) { withdraw(input: $input) { ` + parityTxSelection + ` } }`,
		compare: parityTxFields,
	}
}
