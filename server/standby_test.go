package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"merchantpay/server/servertest"
)

// A PostgreSQL server turned into a hot standby, as a primary is in a
// failover, refuses BEGIN READ WRITE (0A000) and every write in a
// transaction (25006): every write answers 503 UNAVAILABLE with
// Retry-After and changes nothing, reads are served, /readyz says
// read_only; once the server is promoted, writes work again and /readyz is
// ready, without a restart of the service.
func TestStandbyDatabaseIsUnavailable(t *testing.T) {
	c := newPGCluster(t)
	e := servertest.New(t, c.URL(), servertest.WithoutWorkers())
	m := e.Merchant("Failover")
	e.REST("POST", "/wallets", m.TestSecret, sampleWallet("before-failover")).Expect(201)
	fund(e, m.TestSecret, "NGN", 5000)
	expectReady(t, e, http.StatusOK, "ready")

	c.restartAsStandby()
	// The pool's connections died with the server (the first request on
	// each answers 503 too); let it open new ones.
	pool := e.App.DB.SQL()
	pool.SetMaxIdleConns(0)
	pool.SetMaxIdleConns(32)
	servertest.Eventually(t, 20*time.Second, "/readyz to say read_only", func() bool {
		return strings.Contains(string(e.Do("GET", "/readyz", "", nil).Body), `"read_only"`)
	})
	expectWritesRefused(t, e, m, "on-standby")

	c.promote()
	expectWritesWorkAgain(t, e, m, "promoted")
}
