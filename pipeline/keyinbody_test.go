package pipeline_test

import (
	"context"
	"encoding/json"
	"testing"

	"merchantpay/ent"
	"merchantpay/internal/apperr"
	"merchantpay/internal/clock"
	"merchantpay/internal/idem"
	"merchantpay/internal/merchants"
	"merchantpay/internal/testdb"
	"merchantpay/pipeline"
)

// TestKeyInBody: on a route whose idempotency key may come from the body,
// a seen API key is taken on trust up to the idempotency step. A keyed
// write confirms it there (no look-up of its own; a key no longer live is
// UNAUTHORIZED and runs nothing); a write without a key, one that runs
// outside a transaction, a request that is no write and a request refused
// on the way look the key up first, and are refused for a dead key before
// anything runs. A live seen key goes through them all.
func TestKeyInBody(t *testing.T) {
	testdb.EachMigrated(t, func(t *testing.T, url string) {
		store := idem.New(testdb.Open(t, url), clock.Real{})
		auth := &fakeAuth{seen: map[string]merchants.Principal{
			"SECK_seen": {MerchantID: "m1", Mode: "test", Kind: merchants.Secret, KeyHash: "h-gone"},
			"SECK_1":    secret,
		}}
		p := pipeline.New(auth, nil, store)
		runs, passed := 0, 0
		op := func(ctx context.Context, _ *ent.Tx, c *pipeline.Call) (idem.Response, bool) {
			runs++
			return idem.Response{Status: 200, Body: []byte(`{}`)}, true
		}
		// The body says what the request is: {"key": ..., "write": ...};
		// "refuse" refuses it on the way.
		extract := func(c *pipeline.Call) (string, bool, error) {
			var b struct {
				Key           string
				Write, Refuse bool
			}
			_ = json.Unmarshal(c.Body, &b)
			if b.Refuse {
				return "", false, apperr.New(apperr.Validation, "refused on the way")
			}
			return b.Key, b.Write, nil
		}
		h := pipeline.Chain(func(*pipeline.Call) error { passed++; return nil },
			p.Authenticated, pipeline.Body, p.Idempotency(extract, op, func(*pipeline.Call, idem.Response, bool) {}))
		route := &pipeline.Route{ConfirmSeenKey: true, KeyInBody: true, BodyLimit: 1 << 10}
		lookup := &pipeline.Route{ConfirmSeenKey: true, KeyInBody: true, BodyLimit: 1 << 10, Lookup: true}
		confirms := store.ConfirmsKeys()

		for _, tc := range []struct {
			name, key, body string
			route           *pipeline.Route
			wantLookups     int
			wantErr         apperr.Kind
			wantRuns        int
			wantPassed      int
		}{
			{"dead key, keyed write", "SECK_seen", `{"key":"k-1","write":true}`, route, 0, apperr.Unauthorized, 0, 0},
			{"dead key, write without a key", "SECK_seen", `{"write":true}`, route, 1, apperr.Unauthorized, 0, 0},
			{"dead key, keyed lookup write", "SECK_seen", `{"key":"k-2","write":true}`, lookup, 1, apperr.Unauthorized, 0, 0},
			{"dead key, no write", "SECK_seen", `{}`, route, 1, apperr.Unauthorized, 0, 0},
			{"dead key, refused on the way", "SECK_seen", `{"refuse":true}`, route, 1, apperr.Unauthorized, 0, 0},
			{"live key, write without a key", "SECK_1", `{"write":true}`, route, 1, "", 1, 0},
			{"live key, no write", "SECK_1", `{}`, route, 1, "", 0, 1},
			{"live key, refused on the way", "SECK_1", `{"refuse":true}`, route, 1, apperr.Validation, 0, 0},
		} {
			auth.lookups, runs, passed = 0, 0, 0
			err := h(call(tc.route, "POST", tc.body, map[string]string{"X-API-KEY": tc.key, "Content-Type": "application/json"}))
			lookups := tc.wantLookups
			if !confirms {
				lookups = 1 // no key is taken on trust
			}
			var kind apperr.Kind
			if err != nil {
				kind = apperr.As(err).Kind
			}
			if kind != tc.wantErr || auth.lookups != lookups || runs != tc.wantRuns || passed != tc.wantPassed {
				t.Errorf("%s: error %v, look-ups %d, runs %d, passed %d; want %q, %d, %d, %d",
					tc.name, err, auth.lookups, runs, passed, tc.wantErr, lookups, tc.wantRuns, tc.wantPassed)
			}
		}
	})
}
