package idem_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/ent/idempotencyrecord"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/idem"
	"merchantpay/internal/tenant"
	"merchantpay/internal/testdb"
)

var acme = tenant.Tenant{MerchantID: "m-acme", Mode: tenant.Test}

func answer(status int, body string, commit bool, calls *int) idem.Handler {
	return func(ctx context.Context, _ *ent.Tx) (idem.Response, bool) {
		*calls++
		return idem.Response{Status: status, Body: []byte(body), ContentType: "application/json"}, commit
	}
}

// TestDoKeyLifecycle: a keyed answer is stored once and replayed; another
// request under the key is refused; a stored error is replayed too; after
// the TTL the key is free again.
func TestDoKeyLifecycle(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		s := idem.New(db, clk)
		ctx := context.Background()
		req := idem.Request{Tenant: acme, Key: "k1", Hash: idem.HashRequest("POST", "/x", []byte(`{"a":1}`))}
		calls := 0

		resp, replayed, err := s.Do(ctx, req, answer(200, `{"n":1}`, true, &calls))
		if err != nil || replayed || string(resp.Body) != `{"n":1}` || calls != 1 {
			t.Fatalf("first: %q %v %v calls %d", resp.Body, replayed, err, calls)
		}
		resp, replayed, err = s.Do(ctx, req, answer(200, `{"n":2}`, true, &calls))
		if err != nil || !replayed || string(resp.Body) != `{"n":1}` || calls != 1 {
			t.Fatalf("replay: %q %v %v calls %d", resp.Body, replayed, err, calls)
		}
		other := req
		other.Hash = idem.HashRequest("POST", "/x", []byte(`{"a":2}`))
		if _, _, err := s.Do(ctx, other, answer(200, `{}`, true, &calls)); apperr.As(err).Kind != apperr.IdempotencyKeyReused {
			t.Fatalf("reuse: %v", err)
		}

		// An error answer (no effect) is stored and replayed as well.
		bad := idem.Request{Tenant: acme, Key: "k2", Hash: req.Hash}
		resp, _, err = s.Do(ctx, bad, answer(422, `{"e":1}`, false, &calls))
		if err != nil || resp.Status != 422 {
			t.Fatalf("error answer: %d %v", resp.Status, err)
		}
		resp, replayed, err = s.Do(ctx, bad, answer(200, `{}`, true, &calls))
		if err != nil || !replayed || resp.Status != 422 || string(resp.Body) != `{"e":1}` {
			t.Fatalf("error replay: %d %q %v %v", resp.Status, resp.Body, replayed, err)
		}

		// Past the TTL the expired record gives way to the new answer.
		clk.Advance(idem.TTL + time.Second)
		resp, replayed, err = s.Do(ctx, other, answer(201, `{"n":3}`, true, &calls))
		if err != nil || replayed || string(resp.Body) != `{"n":3}` {
			t.Fatalf("after expiry: %q %v %v", resp.Body, replayed, err)
		}
		resp, replayed, err = s.Do(ctx, other, answer(200, `{}`, true, &calls))
		if err != nil || !replayed || resp.Status != 201 || string(resp.Body) != `{"n":3}` {
			t.Fatalf("replay after expiry: %d %q %v %v", resp.Status, resp.Body, replayed, err)
		}
		// Keys are per merchant and mode.
		live := req
		live.Tenant.Mode = tenant.Live
		if _, replayed, err := s.Do(ctx, live, answer(200, `{}`, true, &calls)); err != nil || replayed {
			t.Fatalf("other mode: %v %v", replayed, err)
		}
	})
}

// TestDoRecordStoredFirstElsewhere: another instance stores the key's
// record between this run's look-up and its own record (its unique index
// refuses this one): this run's
// effect is rolled back and the stored answer is replayed, without running
// the handler again.
func TestDoRecordStoredFirstElsewhere(t *testing.T) {
	db := testdb.Open(t, testdb.MigratedPostgresURL(t))
	clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	s := idem.New(db, clk)
	ctx := context.Background()
	req := idem.Request{Tenant: acme, Key: "k1", Hash: idem.HashRequest("POST", "/x", []byte(`{"a":1}`))}
	calls := 0
	resp, replayed, err := s.Do(ctx, req, func(ctx context.Context, tx *ent.Tx) (idem.Response, bool) {
		calls++
		// This run's effect, in its transaction.
		if _, err := tx.Client().IdempotencyRecord.Create().SetMerchantID(acme.MerchantID).SetMode(acme.Mode).
			SetKey("effect").SetRequestHash("h").SetStatusCode(200).SetBody([]byte(`{}`)).SetContentType("application/json").
			SetCreatedAt(clk.Now()).SetExpiresAt(clk.Now().Add(idem.TTL)).Save(tenant.With(ctx, acme)); err != nil {
			t.Fatal(err)
		}
		// The other instance, on its own connection, commits first.
		if _, err := db.Reader().IdempotencyRecord.Create().SetMerchantID(acme.MerchantID).SetMode(acme.Mode).
			SetKey(req.Key).SetRequestHash(req.Hash).SetStatusCode(201).SetBody([]byte(`{"by":"other"}`)).SetContentType("application/json").
			SetCreatedAt(clk.Now()).SetExpiresAt(clk.Now().Add(idem.TTL)).Save(tenant.With(context.Background(), acme)); err != nil {
			t.Fatal(err)
		}
		return idem.Response{Status: 201, Body: []byte(`{"by":"this"}`), ContentType: "application/json"}, true
	})
	if err != nil || !replayed || resp.Status != 201 || string(resp.Body) != `{"by":"other"}` {
		t.Fatalf("got %d %q replayed %v, %v; want the other instance's answer replayed", resp.Status, resp.Body, replayed, err)
	}
	if calls != 1 {
		t.Errorf("handler ran %d times, want 1", calls)
	}
	n, err := db.Reader().IdempotencyRecord.Query().Count(tenant.With(ctx, acme))
	if err != nil || n != 1 {
		t.Errorf("%d records (%v), want the other instance's only: this run's effect stays rolled back", n, err)
	}
}

// TestDoHandsTheTransaction: Do hands its handler the transaction it opened,
// keyed or not, as an argument; what the handler writes in it commits with
// its answer and is rolled back with a refusal. DoLookup hands none.
func TestDoHandsTheTransaction(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		s := idem.New(db, clk)
		ctx := context.Background()
		// write stores a record under effect through the handed
		// transaction, as an operation's effect.
		write := func(effect string, commit bool) idem.Handler {
			return func(ctx context.Context, tx *ent.Tx) (idem.Response, bool) {
				if tx == nil {
					t.Fatalf("%s: handed no transaction", effect)
				}
				if _, err := tx.Client().IdempotencyRecord.Create().SetMerchantID(acme.MerchantID).SetMode(acme.Mode).
					SetKey(effect).SetRequestHash("h").SetStatusCode(200).SetBody([]byte(`{}`)).SetContentType("application/json").
					SetCreatedAt(clk.Now()).SetExpiresAt(clk.Now().Add(idem.TTL)).Save(tenant.With(ctx, acme)); err != nil {
					t.Fatal(err)
				}
				if commit {
					return idem.Response{Status: 200, Body: []byte(`{}`)}, true
				}
				return idem.Response{Status: 422, Body: []byte(`{}`)}, false
			}
		}
		exists := func(key string) bool {
			n, err := db.Reader().IdempotencyRecord.Query().Where(idempotencyrecord.Key(key)).Count(tenant.With(ctx, acme))
			if err != nil {
				t.Fatal(err)
			}
			return n == 1
		}
		hash := idem.HashRequest("POST", "/x", nil)
		for _, c := range []struct {
			key    string
			commit bool
		}{{"keyed", true}, {"keyed-refused", false}, {"", true}, {"", false}} {
			effect := fmt.Sprintf("effect-%s-%v", c.key, c.commit)
			if _, _, err := s.Do(ctx, idem.Request{Tenant: acme, Key: c.key, Hash: hash}, write(effect, c.commit)); err != nil {
				t.Fatalf("%s: %v", effect, err)
			}
			if exists(effect) != c.commit {
				t.Errorf("%s: written %v, want %v", effect, exists(effect), c.commit)
			}
		}
		for _, key := range []string{"", "lookup"} {
			_, _, err := s.DoLookup(ctx, idem.Request{Tenant: acme, Key: key, Hash: hash}, func(ctx context.Context, tx *ent.Tx) (idem.Response, bool) {
				if tx != nil {
					t.Errorf("DoLookup %q: handed %p; want none", key, tx)
				}
				return idem.Response{Status: 200, Body: []byte(`{}`)}, true
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestPurgeDeletesExpiredOnly: Purge removes the records past their TTL
// and keeps the live ones, on both databases.
func TestPurgeDeletesExpiredOnly(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		db := testdb.Open(t, url)
		clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		s := idem.New(db, clk)
		ctx := context.Background()
		calls := 0
		for _, key := range []string{"old-1", "old-2"} {
			req := idem.Request{Tenant: acme, Key: key, Hash: idem.HashRequest("POST", "/x", nil)}
			if _, _, err := s.Do(ctx, req, answer(200, `{}`, true, &calls)); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(idem.TTL + time.Second)
		live := idem.Request{Tenant: acme, Key: "live", Hash: idem.HashRequest("POST", "/x", nil)}
		if _, _, err := s.Do(ctx, live, answer(200, `{}`, true, &calls)); err != nil {
			t.Fatal(err)
		}
		n, err := s.Purge(ctx)
		if err != nil || n != 2 {
			t.Fatalf("purged %d, %v; want the 2 expired", n, err)
		}
		left, err := db.Reader().IdempotencyRecord.Query().Where(idempotencyrecord.Key("live")).Count(tenant.System(ctx))
		if err != nil || left != 1 {
			t.Fatalf("live record left: %d, %v", left, err)
		}
	})
}
