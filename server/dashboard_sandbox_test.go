package server_test

import (
	"testing"

	"merchantpay/internal/rails"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// Merchant.simulations tells the dashboard whether to offer its Sandbox
// page to the calling key: it says what the services that run the
// simulations were given, per mode. By default (the sandbox rails for
// both modes) both keys get them; with simulations in test mode only, the
// live key does not. The field meets no database feature: SQLite only.
func TestMeSimulations(t *testing.T) {
	for _, c := range []struct {
		name       string
		opts       []servertest.Option
		test, live bool
	}{
		{"default", nil, true, true},
		{"test mode only", []servertest.Option{servertest.WithSimulations(func(mode string) bool { return mode == tenant.Test })}, true, false},
		{"none", []servertest.Option{servertest.WithSimulations(rails.SimulationsInNoMode)}, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := servertest.New(t, testdb.MigratedSQLiteURL(t), c.opts...)
			m := e.Merchant("Simulated Shop")
			for key, want := range map[string]bool{m.TestSecret: c.test, m.LiveSecret: c.live} {
				me := e.GQL(key, `{ me { mode simulations } }`, nil).GQLData()["me"].(map[string]any)
				if me["simulations"] != want {
					t.Errorf("%s mode: simulations %v, want %v", me["mode"], me["simulations"], want)
				}
				// The field says what the operations do: fundBalance runs
				// exactly where it says they are offered.
				r := e.GQL(key, `mutation { fundBalance(input: {currency: "NGN", amount: "1"}) { available } }`, nil)
				if refused := r.Code() == "NOT_FOUND"; refused == want {
					t.Errorf("%s mode: simulations %v, but fundBalance answered %s", me["mode"], want, r.Body)
				}
			}
		})
	}
}
