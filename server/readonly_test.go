package server_test

import (
	"database/sql"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// A database that answers but takes no writes (PostgreSQL fenced with
// default_transaction_read_only; SQLite with query_only) refuses every
// write as 503 UNAVAILABLE with Retry-After, changes nothing, still serves
// reads, and /readyz says read_only; once the fence is lifted, writes work
// again and /readyz is ready, without a restart.
func TestReadOnlyDatabaseIsUnavailable(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Fenced")
		e.REST("POST", "/wallets", m.TestSecret, sampleWallet("before-fence")).Expect(201)
		fund(e, m.TestSecret, "NGN", 5000)
		expectReady(t, e, http.StatusOK, "ready")

		fence(t, e, true)
		expectReady(t, e, http.StatusServiceUnavailable, "read_only")
		expectWritesRefused(t, e, m, "during-fence")

		fence(t, e, false)
		expectWritesWorkAgain(t, e, m, "after-fence")
	}, servertest.WithoutWorkers())
}

// fence makes the service's database read-only (on) or writable again.
// On PostgreSQL the database's default applies to new sessions: putting
// the fence up closes the pool's idle connections, as an operator
// terminating sessions would; lifting it leaves them, so the service must
// find its way to new ones on its own.
func fence(t *testing.T, e *servertest.Env, on bool) {
	t.Helper()
	if e.Kind == testdb.SQLite {
		// SQLite has one writer connection; the pragma holds on it.
		v := "0"
		if on {
			v = "1"
		}
		if _, err := e.App.DB.SQL().Exec("PRAGMA query_only = " + v); err != nil {
			t.Fatal(err)
		}
		return
	}
	u, err := url.Parse(e.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	admin, err := sql.Open("postgres", os.Getenv("TEST_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	stmt := "ALTER DATABASE " + name + " RESET default_transaction_read_only"
	if on {
		stmt = "ALTER DATABASE " + name + " SET default_transaction_read_only = on"
	}
	if _, err := admin.Exec(stmt); err != nil {
		t.Fatal(err)
	}
	if on {
		pool := e.App.DB.SQL()
		pool.SetMaxIdleConns(0)
		pool.SetMaxIdleConns(32)
	}
}

func expectReady(t *testing.T, e *servertest.Env, status int, word string) {
	t.Helper()
	r := e.Do("GET", "/readyz", "", nil)
	if r.Status != status || !strings.Contains(string(r.Body), `"`+word+`"`) {
		t.Fatalf("/readyz: %d %s, want %d %q", r.Status, r.Body, status, word)
	}
}

// expectUnavailable checks a REST answer is 503 UNAVAILABLE with a
// Retry-After.
func expectUnavailable(t *testing.T, what string, r *servertest.Resp) {
	t.Helper()
	if r.Status != http.StatusServiceUnavailable || r.Code() != "UNAVAILABLE" || r.Header.Get("Retry-After") == "" {
		t.Errorf("%s on a read-only database: %d %q (Retry-After %q): %s, want 503 UNAVAILABLE with Retry-After",
			what, r.Status, r.Code(), r.Header.Get("Retry-After"), r.Body)
	}
}

// expectWritesRefused checks, on a database taking no writes, that every
// kind of write is refused as UNAVAILABLE and changes nothing, and that
// reads are served.
func expectWritesRefused(t *testing.T, e *servertest.Env, m servertest.Merchant, ref string) {
	t.Helper()
	expectUnavailable(t, "POST /wallets", e.REST("POST", "/wallets", m.TestSecret, sampleWallet(ref)))
	expectUnavailable(t, "POST /wallets with an Idempotency-Key",
		e.REST("POST", "/wallets", m.TestSecret, sampleWallet(ref), "Idempotency-Key", "ro-"+ref))
	expectUnavailable(t, "POST /transactions/withdraw", e.REST("POST", "/transactions/withdraw", m.TestSecret, withdrawal(ref)))
	expectUnavailable(t, "POST /sandbox/balances/fund",
		e.REST("POST", "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "NGN", "amount": 1}))
	g := e.GQL(m.TestSecret, `mutation($in: CreateWalletInput!) { createWallet(input: $in) { walletReference } }`,
		map[string]any{"in": map[string]any{"walletReference": ref + "-gql", "compliance": map[string]any{
			"phone": "+2348012345678", "firstname": "Ada", "lastname": "Obi", "email": "ada@example.com",
			"documents": []any{map[string]any{"documentType": "INTERNATIONAL_PASSPORT", "documentFile": "https://files.example.com/p.png",
				"documentFileType": "url", "documentNo": "A01234567"}}}}})
	if g.Code() != "UNAVAILABLE" {
		t.Errorf("GraphQL createWallet on a read-only database: %d %s, want code UNAVAILABLE", g.Status, g.Body)
	}

	// Reads are served, and show that nothing changed.
	wallets := e.REST("GET", "/wallets", m.TestSecret, nil).Expect(200).List()
	if len(wallets) != 1 {
		t.Errorf("%d wallets after refused writes, want the 1 made before: %v", len(wallets), wallets)
	}
	e.REST("GET", "/balances", m.TestSecret, nil).Expect(200)
	e.REST("GET", "/transactions", m.TestSecret, nil).Expect(200)
	if d := e.GQL(m.TestSecret, `{ wallets(first: 10) { edges { node { walletReference } } } }`, nil).GQLData(); d["wallets"] == nil {
		t.Errorf("GraphQL wallets query: %v", d)
	}
	expectReady(t, e, http.StatusServiceUnavailable, "read_only")
}

// expectWritesWorkAgain waits (each refused write may retire a connection
// still under the old setting) until a write goes through, then checks
// the others and /readyz.
func expectWritesWorkAgain(t *testing.T, e *servertest.Env, m servertest.Merchant, ref string) {
	t.Helper()
	var r *servertest.Resp
	servertest.Eventually(t, 20*time.Second, "a write to go through", func() bool {
		r = e.REST("POST", "/wallets", m.TestSecret, sampleWallet(ref))
		return r.Status != http.StatusServiceUnavailable
	})
	r.Expect(201)
	servertest.Eventually(t, 20*time.Second, "/readyz to say ready", func() bool {
		return e.Do("GET", "/readyz", "", nil).Status == http.StatusOK
	})
	e.REST("POST", "/transactions/withdraw", m.TestSecret, withdrawal(ref)).Expect(200)
	e.REST("POST", "/sandbox/balances/fund", m.TestSecret, map[string]any{"currency": "NGN", "amount": 1}).Expect(200)
	expectReady(t, e, http.StatusOK, "ready")
}

func withdrawal(ref string) map[string]any {
	return map[string]any{"amount": 1000, "currency": "NGN", "reference": "wd-" + ref,
		"beneficiary": map[string]any{"email": "ada@example.com", "bank": "058", "account_name": "Ada Obi", "account_number": "0123456789"}}
}
