package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"merchantpay/server/servertest"
)

// failingRates is a query of n aliases of rate, each for a currency the
// service does not have: it runs, and each fails in its resolver.
func failingRates(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, ` r%d: rate(fromCurrency: "NOPE%d", toCurrency: "NGN") { rate }`, i, i)
	}
	return b.String() + " }"
}

// answersOf is the GraphQL answer of query over HTTP and over WebSocket
// (both protocols), by way in.
func answersOf(t *testing.T, e *servertest.Env, key, query string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{"HTTP": e.GQL(key, query, nil).Body}
	for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
		sub := subscribeWS(t, e, proto, key, query, nil)
		typ, payload := readMessage(t, sub.c)
		if typ != "next" && typ != "data" {
			t.Errorf("%s: %s %.300s, want a result", proto, typ, payload)
		}
		out[proto] = payload
	}
	return out
}

type answer struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// The errors of an operation that ran are cut as a refused one's are: the
// first 100, then one that counts the rest.
func TestGraphQLRanAnswerErrorsAreCut(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		for way, body := range answersOf(t, e, m.TestSecret, failingRates(150)) {
			var a answer
			if err := json.Unmarshal(body, &a); err != nil || len(a.Errors) != 101 {
				t.Errorf("%s: %d errors: %.300s", way, len(a.Errors), body)
				continue
			}
			last := a.Errors[100]
			if fmt.Sprint(last.Extensions["omitted"]) != "50" || !strings.Contains(last.Message, "50 more errors") || last.Extensions["code"] != "VALIDATION_ERROR" {
				t.Errorf("%s: the last error: %+v", way, last)
			}
		}
	}, servertest.With("GRAPHQL_MAX_RESPONSE_BYTES", "1000000"))
}

// An answer of an operation that ran, its errors included, over
// GRAPHQL_MAX_RESPONSE_BYTES is replaced by one RESPONSE_TOO_LARGE error.
func TestGraphQLRanAnswerOverTheCap(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		for way, body := range answersOf(t, e, m.TestSecret, failingRates(40)) {
			var a answer
			if err := json.Unmarshal(body, &a); err != nil || len(a.Errors) != 1 || a.Errors[0].Extensions["code"] != "RESPONSE_TOO_LARGE" || len(body) > 5000 {
				t.Errorf("%s: %d bytes: %.300s", way, len(body), body)
			}
		}
		// A smaller answer is within the cap.
		if r := e.GQL(m.TestSecret, failingRates(2), nil); r.Code() != "VALIDATION_ERROR" {
			t.Errorf("two failing rates: %.300s", r.Body)
		}
	}, servertest.With("GRAPHQL_MAX_RESPONSE_BYTES", "5000"))
}
