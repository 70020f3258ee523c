package server_test

import (
	"testing"

	"merchantpay/internal/merchants"
	"merchantpay/server/servertest"
)

// A keyed GraphQL mutation (input.idempotencyKey) of an API key seen
// before skips the key's own look-up, as a keyed REST write does, and
// confirms the key in its idempotency look-up: a key rolled since gets 401
// and moves nothing, a replay of its key too; so do its unkeyed mutations,
// its queries and a body that is not even JSON, each refused for the key
// before anything else, even when another instance rolled the key. The
// new key works, keyed, twice.
func TestGraphQLRolledKeySeenBefore(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Rolled GQL Co")
		fund(e, m.TestSecret, "NGN", 5000)
		const withdraw = `mutation($k: String, $r: String) { withdraw(input: {amount: "100", currency: "NGN", reference: $r, idempotencyKey: $k,
			beneficiary: {email: "ada@example.com", bank: "058", accountName: "Ada Obi", accountNumber: "0123456789"}}) { reference } }`
		keyed := func(key, idemKey, ref string) *servertest.Resp {
			vars := map[string]any{"r": ref}
			if idemKey != "" {
				vars["k"] = idemKey
			}
			return e.GQL(key, withdraw, vars)
		}
		if d := keyed(m.TestSecret, "before-roll", "r-1").Expect(200).GQLData(); d["withdraw"] == nil {
			t.Fatalf("first withdrawal: %v", d)
		}
		before := available(t, e, m.TestSecret, "NGN")
		// Rolled by another instance: this one still has the key as seen.
		other := merchants.New(e.App.DB, e.App.Clock)
		rolled, err := other.RollKeys(t.Context(), m.ID, "test")
		if err != nil {
			t.Fatal(err)
		}
		// In this order: a keyed request refused by its idempotency look-up
		// makes this instance forget the key, and the rest would look it up.
		for i, r := range []*servertest.Resp{
			keyed(m.TestSecret, "", "r-3"),
			e.GQL(m.TestSecret, `{ transactions(first: 10) { edges { node { reference } } } }`, nil),
			e.Do("POST", "/graphql", m.TestSecret, `{"query": `),
			keyed(m.TestSecret, "before-roll", "r-1"), // a replay
			keyed(m.TestSecret, "after-roll", "r-2"),
		} {
			if r.Status != 401 || r.Code() != "UNAUTHORIZED" {
				t.Errorf("request %d with the rolled key: %d %s", i, r.Status, r.Body)
			}
		}
		if after := available(t, e, rolled.SecretKey, "NGN"); !after.Equal(before) {
			t.Errorf("available %s after the roll, want %s", after, before)
		}
		list := e.GQL(rolled.SecretKey, `{ transactions(first: 10, filter: {type: WITHDRAWAL}) { edges { node { reference } } } }`, nil).GQLData()
		if n := len(list["transactions"].(map[string]any)["edges"].([]any)); n != 1 {
			t.Errorf("%d withdrawals, want the one made before the roll", n)
		}
		for _, k := range []string{"new-1", "new-2"} {
			if d := keyed(rolled.SecretKey, k, k).Expect(200).GQLData(); d["withdraw"] == nil {
				t.Errorf("withdrawal %s with the new key: %v", k, d)
			}
		}
	})
}
