package pipeline_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/idem"
	"merchantpay/internal/merchants"
	"merchantpay/internal/testdb"
	"merchantpay/pipeline"
)

// TestIdempotency: the transport's extractor decides what is a write;
// a write runs its operation through the idempotency store and is answered
// by the transport's Answer, a repeat of its key replayed without running
// it again; anything else goes on down the chain; an extractor's refusal
// runs nothing.
func TestIdempotency(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		store := idem.New(testdb.Open(t, url), clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
		p := pipeline.New(&fakeAuth{}, nil, store)
		runs, answers, passed := 0, 0, 0
		var replays []bool
		var refuse error
		extract := func(c *pipeline.Call) (string, bool, error) {
			return c.R.Header.Get("Idempotency-Key"), c.R.Method == http.MethodPost, refuse
		}
		op := func(ctx context.Context, tx *ent.Tx, c *pipeline.Call) (idem.Response, bool) {
			runs++
			if tx == nil {
				t.Errorf("the operation was handed no transaction; want the write's")
			}
			return idem.Response{Status: 201, Body: []byte(`{"run":1}`), ContentType: "application/json"}, true
		}
		answer := func(c *pipeline.Call, resp idem.Response, replayed bool) {
			answers++
			replays = append(replays, replayed)
			if resp.Status != 201 || string(resp.Body) != `{"run":1}` {
				t.Errorf("answer %d %s", resp.Status, resp.Body)
			}
		}
		h := pipeline.Chain(func(*pipeline.Call) error { passed++; return nil }, p.Idempotency(extract, op, answer))
		write := func(body string) error {
			c := call(&pipeline.Route{}, "POST", body, map[string]string{"Idempotency-Key": "k-1"})
			c.Principal, c.Body = secret, []byte(body)
			return h(c)
		}

		if err := write(`{"a":1}`); err != nil {
			t.Fatal(err)
		}
		if err := write(`{"a":1}`); err != nil {
			t.Fatal(err)
		}
		if runs != 1 || answers != 2 || len(replays) != 2 || replays[0] || !replays[1] || passed != 0 {
			t.Fatalf("runs %d answers %d replays %v passed %d; want one run, the second answer replayed", runs, answers, replays, passed)
		}
		if err := write(`{"a":2}`); apperr.As(err).Kind != apperr.IdempotencyKeyReused || runs != 1 {
			t.Fatalf("other body under the key: %v, runs %d", err, runs)
		}
		get := call(&pipeline.Route{}, "GET", "", nil)
		get.Principal = secret
		if err := h(get); err != nil || passed != 1 || runs != 1 {
			t.Fatalf("GET: %v, passed %d, runs %d; want it passed on", err, passed, runs)
		}
		refuse = apperr.New(apperr.Validation, "an idempotent request holds exactly one mutation")
		if err := write(`{"b":1}`); apperr.As(err).Kind != apperr.Validation || runs != 1 || passed != 1 {
			t.Fatalf("refused by the extractor: %v, runs %d", err, runs)
		}
	})
}

// TestConfirmSeenKey: on a route that may, a keyed write whose API key
// this process has seen is not looked up before it runs, where the
// idempotency look-up confirms keys (PostgreSQL); that look-up refuses a
// key no longer live (here: never stored) as UNAUTHORIZED, runs nothing,
// and the key is forgotten. Elsewhere, and without an Idempotency-Key, the
// key is looked up first.
func TestConfirmSeenKey(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		store := idem.New(testdb.Open(t, url), clock.Real{})
		auth := &fakeAuth{seen: map[string]merchants.Principal{"SECK_seen": {MerchantID: "m1", Mode: "test", Kind: merchants.Secret, KeyHash: "h-gone"}}}
		p := pipeline.New(auth, nil, store)
		runs := 0
		op := func(ctx context.Context, _ *ent.Tx, c *pipeline.Call) (idem.Response, bool) {
			runs++
			return idem.Response{Status: 200, Body: []byte(`{}`)}, true
		}
		extract := func(c *pipeline.Call) (string, bool, error) { return c.R.Header.Get("Idempotency-Key"), true, nil }
		h := pipeline.Chain(nil, p.Authenticated, p.Idempotency(extract, op, func(*pipeline.Call, idem.Response, bool) {}))
		route := &pipeline.Route{ConfirmSeenKey: true}

		err := h(call(route, "POST", `{}`, map[string]string{"X-API-KEY": "SECK_seen", "Idempotency-Key": "k-seen"}))
		if store.ConfirmsKeys() {
			if apperr.As(err).Kind != apperr.Unauthorized || runs != 0 || auth.lookups != 0 {
				t.Fatalf("seen key, not live: %v, runs %d, look-ups %d; want UNAUTHORIZED from the idempotency look-up", err, runs, auth.lookups)
			}
			if len(auth.forgot) != 1 || auth.forgot[0] != "h-gone" {
				t.Fatalf("forgotten %v, want h-gone", auth.forgot)
			}
		} else if apperr.As(err).Kind != apperr.Unauthorized || auth.lookups != 1 {
			t.Fatalf("seen key without confirming look-ups: %v, look-ups %d; want one", err, auth.lookups)
		}
		auth.lookups = 0
		if err := h(call(route, "POST", `{}`, map[string]string{"X-API-KEY": "SECK_seen"})); apperr.As(err).Kind != apperr.Unauthorized || auth.lookups != 1 {
			t.Fatalf("seen key, no Idempotency-Key: %v, look-ups %d; want one", err, auth.lookups)
		}
		auth.lookups = 0
		if err := h(call(&pipeline.Route{}, "POST", `{}`, map[string]string{"X-API-KEY": "SECK_seen", "Idempotency-Key": "k-2"})); apperr.As(err).Kind != apperr.Unauthorized || auth.lookups != 1 {
			t.Fatalf("route without ConfirmSeenKey: %v, look-ups %d; want one", err, auth.lookups)
		}
	})
}

// TestOutsideAfterExtractor: a route's Outside is asked after the
// transport's extractor has read the request, so it may answer from what
// the extractor found (GraphQL's inspect keeps it on the call's Input); a
// write it sends outside runs with no transaction, another in the store's;
// a request that is no write does not ask it.
func TestOutsideAfterExtractor(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		store := idem.New(testdb.Open(t, url), clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
		p := pipeline.New(&fakeAuth{}, nil, store)
		type found struct{ provider bool }
		asked := 0
		route := &pipeline.Route{Outside: func(c *pipeline.Call) bool {
			asked++
			f, _ := c.Input.(*found)
			return f != nil && f.provider
		}}
		extract := func(c *pipeline.Call) (string, bool, error) {
			c.Input = &found{provider: c.R.Header.Get("X-Provider") != ""}
			return "", c.R.Method == http.MethodPost, nil
		}
		var gotTx []bool
		op := func(ctx context.Context, tx *ent.Tx, c *pipeline.Call) (idem.Response, bool) {
			gotTx = append(gotTx, tx != nil)
			return idem.Response{Status: 200, Body: []byte(`{}`), ContentType: "application/json"}, true
		}
		h := pipeline.Chain(func(*pipeline.Call) error { return nil },
			p.Idempotency(extract, op, func(*pipeline.Call, idem.Response, bool) {}))
		for _, hdr := range []map[string]string{{"X-Provider": "yes"}, nil} {
			c := call(route, "POST", `{}`, hdr)
			c.Principal, c.Body = secret, []byte(`{}`)
			if err := h(c); err != nil {
				t.Fatal(err)
			}
		}
		get := call(route, "GET", "", map[string]string{"X-Provider": "yes"})
		get.Principal = secret
		if err := h(get); err != nil {
			t.Fatal(err)
		}
		if len(gotTx) != 2 || gotTx[0] || !gotTx[1] || asked != 2 {
			t.Fatalf("transactions handed %v, Outside asked %d times; want none for the provider's write, one for the other, and two asks", gotTx, asked)
		}
	})
}
