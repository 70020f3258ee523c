package server_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/rails"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/server"
	"merchantpay/server/servertest"
)

// Where the sandbox simulations are not offered, each of them (funding a
// balance, an incoming bank transfer, completing a crypto-pay checkout)
// answers 404 NOT_FOUND, as an unknown route does, over REST, over GraphQL
// and from the hosted checkout page alike, and changes nothing: the
// operations refuse, not the transports.
func TestSimulationsOffAreNotFound(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, dbURL string) {
		e := envWithoutSimulations(t, dbURL)
		m := cpMerchant(t, e, "No Sandbox")
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic", "currency": "NGN"}).Expect(201).Data()
		number, _ := acc["account_number"].(string)
		prepay, _ := start(t, e, m.LiveSecret, directBody("Shoes", "25", "USDT"))["prepayId"].(string)

		notFound := func(what string, r *servertest.Resp) {
			t.Helper()
			if r.Code() != "NOT_FOUND" || (r.Status != http.StatusNotFound && r.Status != http.StatusOK) {
				t.Errorf("%s without simulations: %d %s, want NOT_FOUND", what, r.Status, r.Body)
			}
			if strings.HasPrefix(string(r.Body), `{"status"`) && r.Status != http.StatusNotFound {
				t.Errorf("%s: REST answered %d, want 404", what, r.Status)
			}
		}
		for _, key := range []string{m.TestSecret, m.LiveSecret} {
			notFound("REST fund", e.REST("POST", "/sandbox/balances/fund", key, map[string]any{"currency": "NGN", "amount": 5000}))
			notFound("GraphQL fundBalance", e.GQL(key, `mutation { fundBalance(input: {currency: "NGN", amount: "5000"}) { available } }`, nil))
		}
		notFound("REST bank transfer", e.REST("POST", "/sandbox/deposits/bank-transfer", m.TestSecret,
			map[string]any{"account_number": number, "amount": 5000}))
		notFound("GraphQL simulateBankTransfer", e.GQL(m.TestSecret, `mutation($n: String!) { simulateBankTransfer(input: {accountNumber: $n, amount: "5000"}) { status } }`,
			map[string]any{"n": number}))
		notFound("REST crypto-pay completion", e.REST("POST", "/sandbox/deposits/crypto-pay/"+prepay, m.LiveSecret, map[string]any{"outcome": "success"}))
		notFound("GraphQL completeCryptoPay", e.GQL(m.LiveSecret, `mutation($p: String!) { completeCryptoPay(input: {prepayId: $p, outcome: SUCCESS}) { status } }`,
			map[string]any{"p": prepay}))
		if _, err := e.App.CryptoPay.Complete(tenant.System(context.Background()), nil, prepay, "success"); !apperr.Is(err, apperr.NotFound) {
			t.Errorf("the hosted page's completion without simulations: %v, want NOT_FOUND", err)
		}

		// Nothing moved: no balance, no deposit, the checkout still pending.
		for _, key := range []string{m.TestSecret, m.LiveSecret} {
			for _, b := range e.REST("GET", "/balances", key, nil).Expect(200).List() {
				if b := b.(map[string]any); b["available"].(interface{ String() string }).String() != "0" {
					t.Errorf("balance after refused simulations: %v", b)
				}
			}
		}
		if txs := e.REST("GET", "/transactions?type=DEPOSIT", m.TestSecret, nil).Expect(200).List(); len(txs) != 0 {
			t.Errorf("deposits after a refused simulation: %v", txs)
		}
		checkout := e.GQL(m.LiveSecret, `{ transactions(first: 10) { edges { node { status } } } }`, nil).GQLData()
		if s := checkout["transactions"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any)["status"]; s != "PENDING" {
			t.Errorf("checkout after a refused completion: %v, want PENDING", s)
		}
	})
}

// By default (the sandbox rails) the simulations work, over both
// transports: funding and bank transfers in test mode, crypto-pay
// completion in live mode.
func TestSimulationsOnByDefault(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := cpMerchant(t, e, "Sandbox")
		e.REST("POST", "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "NGN", "amount": 5000}).Expect(200)
		e.GQL(m.TestSecret, `mutation { fundBalance(input: {currency: "NGN", amount: "5000"}) { available } }`, nil).GQLData()
		acc := e.REST("POST", "/accounts", m.TestSecret, map[string]any{"account_type": "static_dynamic", "currency": "NGN"}).Expect(201).Data()
		e.REST("POST", "/sandbox/deposits/bank-transfer", m.TestSecret, map[string]any{"account_number": acc["account_number"], "amount": 5000}).Expect(200)
		e.GQL(m.TestSecret, `mutation($n: String!) { simulateBankTransfer(input: {accountNumber: $n, amount: "5000"}) { status } }`,
			map[string]any{"n": acc["account_number"]}).GQLData()
		for i, via := range []string{"REST", "GraphQL"} {
			prepay, _ := start(t, e, m.LiveSecret, directBody("Shoes", "25", "USDT"))["prepayId"].(string)
			if i == 0 {
				e.REST("POST", "/sandbox/deposits/crypto-pay/"+prepay, m.LiveSecret, map[string]any{"outcome": "success"}).Expect(200)
				continue
			}
			if d := e.GQL(m.LiveSecret, `mutation($p: String!) { completeCryptoPay(input: {prepayId: $p, outcome: SUCCESS}) { status } }`,
				map[string]any{"p": prepay}).GQLData(); d["completeCryptoPay"].(map[string]any)["status"] != "SUCCESS" {
				t.Errorf("%s completion: %v", via, d)
			}
		}
	})
}

// envWithoutSimulations starts the service on dbURL with the sandbox
// simulations offered in no mode, as with real rails in every mode.
func envWithoutSimulations(t *testing.T, dbURL string) *servertest.Env {
	t.Helper()
	e := &servertest.Env{T: t, DBURL: dbURL, Clock: clock.NewFake(time.Now()), Kind: testdb.SQLite}
	if strings.HasPrefix(dbURL, "postgres") {
		e.Kind = testdb.Postgres
	}
	var h http.Handler = http.NotFoundHandler()
	e.Srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(e.Srv.Close)
	e.URL = e.Srv.URL
	vars := map[string]string{"DATABASE_URL": dbURL, "PUBLIC_BASE_URL": e.URL, "RATE_LIMIT": "0", "PRICE_SOURCE": "static"}
	cfg, err := server.LoadConfig(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	app, err := server.New(context.Background(), cfg, server.Options{Clock: e.Clock, Logger: log, Simulations: rails.SimulationsInNoMode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		app.WebSockets.Shutdown()
		app.Close()
	})
	e.App, h = app, app.Handler()
	return e
}
