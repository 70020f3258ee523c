package server_test

import (
	"testing"

	"merchantpay/server/servertest"
)

// REST and GraphQL run one pipeline: a key's requests over either API
// take their tokens from the one bucket of that key, so a bucket emptied
// over one API refuses the other (429 RATE_LIMITED with Retry-After), and
// another key is untouched. The bucket refills a token a second, so each
// way is tried a few times: one refusal shows the bucket is shared, where
// two buckets would let every such request through.
func TestBothAPIsShareTheRateLimit(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Both")
		rest := func() *servertest.Resp { return e.REST("GET", "/wallets", m.TestSecret, nil) }
		gql := func() *servertest.Resp { return e.GQL(m.TestSecret, `{ me { id } }`, nil) }
		limited := func(r *servertest.Resp) bool {
			if r.Status != 429 {
				return false
			}
			if r.Code() != "RATE_LIMITED" || r.Header.Get("Retry-After") == "" {
				t.Errorf("429 without its code or Retry-After: %s %v", r.Body, r.Header)
			}
			return true
		}
		for _, way := range []struct {
			name         string
			drain, other func() *servertest.Resp
		}{{"REST then GraphQL", rest, gql}, {"GraphQL then REST", gql, rest}} {
			refused := false
			for try := 0; try < 3 && !refused; try++ {
				drained := false
				for i := 0; i < 20 && !drained; i++ {
					drained = limited(way.drain())
				}
				if !drained {
					t.Fatalf("%s: 20 requests at RATE_LIMIT=1 were never limited", way.name)
				}
				refused = limited(way.other())
			}
			if !refused {
				t.Errorf("%s: the other API was not limited once its key's bucket was empty", way.name)
			}
		}
		e.GQL(e.Merchant("Calm").TestSecret, `{ me { id } }`, nil).Expect(200)
	}, servertest.With("RATE_LIMIT", "1"), servertest.With("RATE_LIMIT_BURST", "2"))
}
