package server_test

import (
	"bytes"
	"testing"
	"time"

	"merchantpay/ent/transaction"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// GET /transactions/{ref} by the service's reference authenticates in its
// look-up's statement; every way a key or a reference can be wrong still
// gets the answer the usual way gives.
func TestGetTransactionKeys(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		a, b, ref := withdrawalToGet(t, e, "Pay-9")
		byRef := e.REST("GET", "/transactions/"+ref, a.TestSecret, nil).Expect(200)
		if got := byRef.Data(); got["reference"] != ref || got["merchant_reference"] != "Pay-9" {
			t.Errorf("by reference: %s", byRef.Body)
		}
		// The merchant's reference goes the usual way: the same answer.
		byMine := e.REST("GET", "/transactions/pay-9", a.TestSecret, nil).Expect(200)
		if !bytes.Equal(byRef.Body, byMine.Body) {
			t.Errorf("answers differ:\n%s\n%s", byRef.Body, byMine.Body)
		}
		for _, c := range append(badKeys(a),
			keyCase{"other merchant", b.TestSecret, 404, "NOT_FOUND"},
			keyCase{"other mode", a.LiveSecret, 404, "NOT_FOUND"},
		) {
			if r := e.REST("GET", "/transactions/"+ref, c.key, nil); r.Status != c.status || r.Code() != c.code {
				t.Errorf("%s: %d %s", c.name, r.Status, r.Body)
			}
		}
		if r := e.REST("GET", "/transactions/"+ref+"x", a.TestSecret, nil); r.Status != 404 || r.Code() != "NOT_FOUND" {
			t.Errorf("unknown reference: %d %s", r.Status, r.Body)
		}
		// Rolling voids the old key at once, here too.
		rolled, err := e.App.Merchants.RollKeys(t.Context(), a.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		if r := e.REST("GET", "/transactions/"+ref, a.TestSecret, nil); r.Status != 401 || r.Code() != "UNAUTHORIZED" {
			t.Errorf("rolled key: %d %s", r.Status, r.Body)
		}
		if r := e.REST("GET", "/transactions/"+ref, rolled.PublicKey, nil); r.Status != 403 {
			t.Errorf("new public key: %d %s", r.Status, r.Body)
		}
		e.REST("GET", "/transactions/"+ref, rolled.SecretKey, nil).Expect(200)
	})
}

// A transaction GET rendered before is answered as rendered only while its
// row is unchanged (PostgreSQL: same version); any write to the row, even
// one outside the service's code, is seen by the next GET.
func TestGetTransactionRenderedOnlyWhileUnchanged(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		a, b, ref := withdrawalToGet(t, e, "Poll-1")
		get := func() map[string]any {
			return e.REST("GET", "/transactions/"+ref, a.TestSecret, nil).Expect(200).Data()
		}
		// The payout worker submits the withdrawal at once (a write to the
		// row); after that the row rests until the fake clock moves.
		submitted(t, e, ref)
		first := get()
		hits0, _, _ := e.App.Transactions.RenderedStats()
		if again := get(); again["narration"] != first["narration"] || again["status"] != first["status"] {
			t.Fatalf("unchanged row, different answers: %v then %v", first, again)
		}
		hits1, _, kept := e.App.Transactions.RenderedStats()
		if e.Kind == testdb.Postgres && (hits1 != hits0+1 || kept == 0) {
			t.Errorf("unchanged row: hits %d then %d, %d kept; want the rendered answer", hits0, hits1, kept)
		}
		// Another tenant's key never gets the rendered answer.
		if r := e.REST("GET", "/transactions/"+ref, b.TestSecret, nil); r.Status != 404 {
			t.Errorf("other merchant: %d %s", r.Status, r.Body)
		}
		// A write by hand, as an operator's fix would be.
		if _, err := e.App.DB.SQL().ExecContext(t.Context(),
			`UPDATE transactions SET narration = 'fixed by hand' WHERE reference = `+placeholder(e), ref); err != nil {
			t.Fatal(err)
		}
		if got := get(); got["narration"] != "fixed by hand" {
			t.Errorf("after the row changed: narration %v", got["narration"])
		}
		// And a write that changes nothing the answer shows still reads again.
		if _, err := e.App.DB.SQL().ExecContext(t.Context(),
			`UPDATE transactions SET narration = narration WHERE reference = `+placeholder(e), ref); err != nil {
			t.Fatal(err)
		}
		if got := get(); got["narration"] != "fixed by hand" {
			t.Errorf("after a rewrite: narration %v", got["narration"])
		}
		if hits2, _, _ := e.App.Transactions.RenderedStats(); hits2 != hits1 {
			t.Errorf("changed rows answered as rendered: hits %d then %d", hits1, hits2)
		}
	})
}

func placeholder(e *servertest.Env) string {
	if e.Kind == testdb.Postgres {
		return "$1"
	}
	return "?"
}

// withdrawalToGet makes merchants Alpha (funded, with a withdrawal of
// merchant reference merchantRef) and Beta, and returns them and the
// withdrawal's reference.
func withdrawalToGet(t *testing.T, e *servertest.Env, merchantRef string) (a, b servertest.Merchant, ref string) {
	t.Helper()
	a, b = e.Merchant("Alpha"), e.Merchant("Beta")
	fund(e, a.TestSecret, "NGN", 5000)
	wd := e.REST("POST", "/transactions/withdraw", a.TestSecret, map[string]any{"amount": 1000, "currency": "NGN", "reference": merchantRef,
		"beneficiary": map[string]any{"email": "ada@example.com", "bank": "058", "account_name": "Ada Obi", "account_number": "0123456789"}}).Data()
	ref, _ = wd["reference"].(string)
	if ref == "" {
		t.Fatalf("withdrawal: %v", wd)
	}
	return a, b, ref
}

// submitted waits until the payout worker has submitted withdrawal ref and
// let go of it.
func submitted(t *testing.T, e *servertest.Env, ref string) {
	t.Helper()
	ctx := tenant.System(t.Context())
	servertest.Eventually(t, 10*time.Second, "the payout of "+ref+" submitted", func() bool {
		ok, err := e.App.DB.Reader().Transaction.Query().Where(transaction.Reference(ref),
			transaction.RailsReferenceNotNil(), transaction.LeaseOwnerIsNil()).Exist(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	})
}
