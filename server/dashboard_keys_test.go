package server_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"merchantpay/ent/apikey"
	"merchantpay/internal/merchants"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
	"merchantpay/server/servertest"
)

const rollKeysGQL = `mutation($s: Int) { rollApiKeys(input: {overlapSeconds: $s}) { secretKey publicKey oldKeysExpireAt } }`

// keyWorks reports whether key still reads the balances over REST, as a GET
// (authenticated by the database) and as a keyed POST (which on
// PostgreSQL may take the process's memory of the key, merchants.Seen).
func keyWorks(t *testing.T, e *servertest.Env, key, idemKey string) (get, post bool) {
	t.Helper()
	g := e.REST("GET", "/balances", key, nil)
	p := e.REST("POST", "/sandbox/balances/fund", key, map[string]any{"currency": "NGN", "amount": 1}, "Idempotency-Key", idemKey)
	return g.Status == 200, p.Status == 200
}

// Rolling with an overlap keeps the old keys working until the overlap
// ends, then refuses them everywhere, the process's memory of seen keys
// included; the overlap is at most 24 hours.
func TestRollKeysWithOverlap(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Roll Co")
		// Seen before the roll: the keyed POST path remembers the key.
		if g, p := keyWorks(t, e, m.TestSecret, "before-1"); !g || !p {
			t.Fatalf("old key before the roll: GET %v POST %v", g, p)
		}
		for _, bad := range []int{-1, 86401} {
			r := e.GQL(m.TestSecret, rollKeysGQL, map[string]any{"s": bad})
			if r.Code() != "VALIDATION_ERROR" || !slices.Contains(gqlFields(r), "overlapSeconds") {
				t.Errorf("overlap %d: %s", bad, r.Body)
			}
		}
		rolled := e.GQL(m.TestSecret, rollKeysGQL, map[string]any{"s": 3600}).GQLData()["rollApiKeys"].(map[string]any)
		newSecret := rolled["secretKey"].(string)
		wantExpiry := e.Clock.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
		if rolled["oldKeysExpireAt"] != wantExpiry {
			t.Errorf("oldKeysExpireAt %v, want %s", rolled["oldKeysExpireAt"], wantExpiry)
		}
		for _, k := range []string{m.TestSecret, newSecret} {
			if g, p := keyWorks(t, e, k, "during-"+k[:12]); !g || !p {
				t.Errorf("during the overlap, %s: GET %v POST %v", k[:14], g, p)
			}
		}
		keys := e.GQL(newSecret, `{ apiKeys { kind mode prefix expiresAt } }`, nil).GQLData()["apiKeys"].([]any)
		if len(keys) != 4 {
			t.Fatalf("apiKeys during the overlap: %v", keys)
		}
		expiring := 0
		for _, k := range keys {
			k := k.(map[string]any)
			if k["mode"] != "TEST" {
				t.Errorf("key of another mode listed: %v", k)
			}
			if k["expiresAt"] == wantExpiry {
				expiring++
			}
		}
		if expiring != 2 {
			t.Errorf("%d keys expire at the overlap's end, want the 2 old ones: %v", expiring, keys)
		}

		e.Clock.Advance(time.Hour)
		if g, p := keyWorks(t, e, m.TestSecret, "after-1"); g || p {
			t.Errorf("old key after the overlap: GET %v POST %v; want both refused", g, p)
		}
		if g, p := keyWorks(t, e, newSecret, "after-2"); !g || !p {
			t.Errorf("new key after the overlap: GET %v POST %v", g, p)
		}
		if keys := e.GQL(newSecret, `{ apiKeys { prefix } }`, nil).GQLData()["apiKeys"].([]any); len(keys) != 2 {
			t.Errorf("apiKeys after the overlap: %v", keys)
		}

		// Without an overlap the rolled keys stop at once.
		again := e.GQL(newSecret, `mutation { rollApiKeys { secretKey oldKeysExpireAt } }`, nil).GQLData()["rollApiKeys"].(map[string]any)
		if again["oldKeysExpireAt"] != nil {
			t.Errorf("roll without overlap: %v", again)
		}
		if g, p := keyWorks(t, e, newSecret, "after-3"); g || p {
			t.Errorf("key rolled without overlap: GET %v POST %v", g, p)
		}
	})
}

// The CLI takes --overlap; more than 24 hours is refused.
func TestRollKeysOverlapService(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Cli Co")
		if _, err := e.App.Merchants.RollKeysWithOverlap(t.Context(), nil, m.ID, tenant.Test, 25*time.Hour); err == nil {
			t.Error("an overlap of 25 h was taken")
		}
		r, err := e.App.Merchants.RollKeysWithOverlap(t.Context(), nil, m.ID, tenant.Test, 10*time.Minute)
		if err != nil || r.OldKeysExpireAt == nil {
			t.Fatalf("roll: %+v %v", r, err)
		}
		// A second roll with a longer overlap does not lengthen the first
		// keys' life.
		if _, err := e.App.Merchants.RollKeysWithOverlap(t.Context(), nil, m.ID, tenant.Test, time.Hour); err != nil {
			t.Fatal(err)
		}
		old, err := e.App.DB.Reader().APIKey.Query().Where(apikey.Hash(merchants.Hash(m.TestSecret))).Only(sys)
		if err != nil {
			t.Fatal(err)
		}
		if old.ExpiresAt == nil || !old.ExpiresAt.Equal(*r.OldKeysExpireAt) {
			t.Errorf("first keys now expire at %v, want %v", old.ExpiresAt, r.OldKeysExpireAt)
		}
	})
}

// A key's last use shows at once in apiKeys (this process's memory) and is
// written only by the flusher, not by the requests themselves.
func TestKeyLastUsed(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Used Co")
		stored := func() *time.Time {
			k, err := e.App.DB.Reader().APIKey.Query().Where(apikey.Hash(merchants.Hash(m.TestSecret))).Only(sys)
			if err != nil {
				t.Fatal(err)
			}
			return k.LastUsedAt
		}
		for range 3 {
			e.REST("GET", "/balances", m.TestSecret, nil).Expect(200)
		}
		if at := stored(); at != nil {
			t.Errorf("last_used_at written by a request: %v", at)
		}
		used := e.Clock.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		keys := e.GQL(m.TestSecret, `{ apiKeys { kind prefix lastUsedAt } }`, nil).GQLData()["apiKeys"].([]any)
		found := false
		for _, k := range keys {
			k := k.(map[string]any)
			if k["prefix"] == m.TestSecret[:14] {
				found = true
				if k["lastUsedAt"] != used {
					t.Errorf("lastUsedAt %v, want %s", k["lastUsedAt"], used)
				}
			} else if k["lastUsedAt"] != nil {
				t.Errorf("unused key has lastUsedAt: %v", k)
			}
		}
		if !found {
			t.Fatalf("secret key not listed: %v", keys)
		}
		n, err := e.App.Merchants.FlushUsage(t.Context())
		if err != nil || n != 1 {
			t.Fatalf("flush wrote %d keys, err %v; want 1", n, err)
		}
		if at := stored(); at == nil || !at.Equal(e.Clock.Now().Truncate(time.Millisecond)) && !at.Equal(e.Clock.Now()) {
			t.Errorf("last_used_at after the flush: %v, want %v", at, e.Clock.Now())
		}
		if n, _ := e.App.Merchants.FlushUsage(t.Context()); n != 0 {
			t.Errorf("a second flush without use wrote %d keys", n)
		}
	}, servertest.WithoutWorkers())
}

// `merchant roll-keys --overlap` prints when the old keys stop; more than
// 24 hours is refused naming the option.
func TestRollKeysCLIOverlap(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		t.Setenv("DATABASE_URL", url)
		t.Setenv("LOG_LEVEL", "error")
		code, out, stderr := runCLI(t, "merchant", "create", "--name", "Overlap Co", "--email", "ops@overlap.example")
		if code != 0 {
			t.Fatalf("create: %d %s", code, stderr)
		}
		var created merchants.Created
		if err := json.Unmarshal(out, &created); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := runCLI(t, "merchant", "roll-keys", "--merchant", created.MerchantID, "--mode", "test", "--overlap", "25h"); code != 1 || !strings.Contains(stderr, "overlap") {
			t.Errorf("25h: exit %d, %s", code, stderr)
		}
		before := time.Now()
		code, out, stderr = runCLI(t, "merchant", "roll-keys", "--merchant", created.MerchantID, "--mode", "test", "--overlap", "2h")
		if code != 0 {
			t.Fatalf("roll-keys --overlap 2h: %d %s", code, stderr)
		}
		var rolled merchants.Rolled
		if err := json.Unmarshal(out, &rolled); err != nil || rolled.OldKeysExpireAt == nil {
			t.Fatalf("roll-keys printed %s (%v)", out, err)
		}
		if d := rolled.OldKeysExpireAt.Sub(before); d < 2*time.Hour-time.Minute || d > 2*time.Hour+time.Minute {
			t.Errorf("old keys expire in %s, want 2h", d)
		}
	})
}
