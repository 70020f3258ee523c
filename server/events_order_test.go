package server_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

// TestSubscriptionInIDOrderAcrossInstances: two instances on one
// PostgreSQL database take concurrent withdrawals, whose ids commit out of
// order; a subscription on one of them gets the events in id order, and a
// client resuming after any event it got receives exactly the ones that
// followed it.
func TestSubscriptionInIDOrderAcrossInstances(t *testing.T) {
	a := servertest.New(t, testdb.MigratedPostgresURL(t))
	b := servertest.New(t, a.DBURL)
	m := a.Merchant("Ordered Events")
	fund(a, m.TestSecret, "NGN", 1000000)
	const query = `subscription($a: ID) { events(types: [WITHDRAWAL_PENDING], after: $a) { id } }`
	live := subscribeWS(t, b, "graphql-transport-ws", m.TestSecret, query, nil)
	const rounds, each = 2, 20
	var got []string
	for r := range rounds {
		status := make([]int, each)
		var wg sync.WaitGroup
		for i := range each {
			e := a
			if i%2 == 1 {
				e = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				status[i] = e.REST(http.MethodPost, "/transactions/withdraw", m.TestSecret, withdrawal(fmt.Sprintf("order-%d-%d", r, i))).Status
			}()
		}
		wg.Wait()
		for i, s := range status {
			if s != http.StatusOK {
				t.Fatalf("withdrawal %d of round %d: status %d", i, r, s)
			}
		}
		for range each {
			got = append(got, live.next()["id"].(string))
		}
	}
	edges := a.GQL(m.TestSecret, `{ events(first: 100) { edges { node { id event } } } }`, nil).GQLData()["events"].(map[string]any)["edges"].([]any)
	var stored []string // oldest first
	for i := len(edges) - 1; i >= 0; i-- {
		n := edges[i].(map[string]any)["node"].(map[string]any)
		if n["event"] == "withdrawal.pending" {
			stored = append(stored, n["id"].(string))
		}
	}
	if len(stored) != len(got) {
		t.Fatalf("%d stored withdrawal.pending events, %d streamed", len(stored), len(got))
	}
	for i := range got {
		if got[i] != stored[i] {
			t.Fatalf("streamed event %d is %s, stored in id order: %s", i, got[i], stored[i])
		}
	}
	for _, k := range []int{each/2 - 1, each + each/2} {
		resumed := subscribeWS(t, b, "graphql-transport-ws", m.TestSecret, query, map[string]any{"a": got[k]})
		for _, want := range got[k+1:] {
			if id := resumed.next()["id"]; id != want {
				t.Fatalf("resumed after %s: got %v, want %s", got[k], id, want)
			}
		}
		_ = resumed.c.Close()
	}
}
