package server_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"merchantpay/server/servertest"
)

// gqlVarError is one error entry of an answer refused for its variables.
type gqlVarError struct {
	Message    string `json:"message"`
	Path       []any  `json:"path"`
	Extensions struct {
		Code   string `json:"code"`
		Errors []struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"errors"`
	} `json:"extensions"`
}

// varFields checks that every entry of errs is a VALIDATION_ERROR naming
// one field at the variable's path, and returns those fields in order.
func varFields(t *testing.T, what string, errs []gqlVarError) []string {
	t.Helper()
	var out []string
	for _, e := range errs {
		if e.Extensions.Code != "VALIDATION_ERROR" || len(e.Extensions.Errors) != 1 || len(e.Path) < 2 || e.Path[0] != "variable" {
			t.Errorf("%s: entry %+v, want a VALIDATION_ERROR naming one field at its variable's path", what, e)
			continue
		}
		out = append(out, e.Extensions.Errors[0].Field)
	}
	return out
}

func answerErrors(t *testing.T, what string, body []byte) []gqlVarError {
	t.Helper()
	var answer struct {
		Errors []gqlVarError `json:"errors"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		t.Fatalf("%s: %v: %s", what, err, body)
	}
	return answer.Errors
}

const (
	withdrawByVariable = `mutation($i: WithdrawInput!){withdraw(input:$i){reference}}`
	withdrawInline     = `mutation{withdraw(input:{amount:"1",currency:"NGN",beneficiary:{accountName:"X"}}){reference}}`
)

var (
	withdrawVars       = map[string]any{"i": map[string]any{"amount": "1", "currency": "NGN", "beneficiary": map[string]any{"accountName": "X"}}}
	withdrawVarsFields = []string{"i.beneficiary.email", "i.beneficiary.bank", "i.beneficiary.accountNumber"}
)

// Variables that do not fit their types are refused with an error entry
// for every bad value, as the same input written in the document is, in
// both media types, over POST and GET; nothing runs.
func TestGraphQLVariablesNameEveryBadField(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		fund(e, m.TestSecret, "NGN", 5000)
		balances := func() string {
			return string(e.GQL(m.TestSecret, `{ balances { currency available pending } }`, nil).Expect(200).Body)
		}
		before := balances()
		inline := e.GQL(m.TestSecret, withdrawInline, nil)
		for _, accept := range []string{acceptJSON, acceptGraphQL} {
			r := e.GQL(m.TestSecret, withdrawByVariable, withdrawVars, "Accept", accept)
			status, hasData := 200, true
			if accept == acceptGraphQL {
				status, hasData = 400, false
			}
			expectAnswer(t, accept, r, status, accept, "VALIDATION_ERROR", hasData)
			errs := answerErrors(t, accept, r.Body)
			if got := varFields(t, accept, errs); !slices.Equal(got, withdrawVarsFields) {
				t.Errorf("%s: fields %q, want %q; body %s", accept, got, withdrawVarsFields, r.Body)
			}
			if n := len(answerErrors(t, "inline", inline.Body)); n != len(errs) {
				t.Errorf("%s: %d errors, the same input inline %d: %s", accept, len(errs), n, inline.Body)
			}
		}
		// Numbers where Strings belong (the service's own rule, checked
		// after gqlparser's coercion passed) are listed all at once too.
		r := e.GQL(m.TestSecret, withdrawByVariable, map[string]any{"i": map[string]any{"amount": "1", "currency": "NGN", "reference": 5,
			"beneficiary": map[string]any{"email": "ada@example.com", "bank": 58, "accountName": "Ada Obi", "accountNumber": 123456789}}})
		want := []string{"i.beneficiary.bank", "i.beneficiary.accountNumber", "i.reference"}
		if got := varFields(t, "numbers", answerErrors(t, "numbers", r.Body)); !slices.Equal(got, want) {
			t.Errorf("numbers for strings: fields %q, want %q; body %s", got, want, r.Body)
		}
		if after := balances(); after != before {
			t.Errorf("balances after refused withdrawals: %s, before %s", after, before)
		}
		// A query over GET.
		vars, _ := json.Marshal(map[string]any{"n": "many", "f": map[string]any{"status": "NOPE", "type": 5, "extra": true}})
		r = gqlGet(e, m.TestSecret, url.Values{
			"query":     {`query($n: Int, $f: TransactionFilter) { transactions(first: $n, filter: $f) { edges { node { reference } } } }`},
			"variables": {string(vars)},
		})
		want = []string{"n", "f.extra", "f.type", "f.status"}
		if got := varFields(t, "GET", answerErrors(t, "GET", r.Body)); r.Status != http.StatusOK || !slices.Equal(got, want) {
			t.Errorf("GET: %d, fields %q, want %q; body %s", r.Status, got, want, r.Body)
		}
	})
}

// Over WebSocket, a subscription's variables and a mutation's are refused
// as over HTTP, every bad value listed, in an error message for the
// operation.
func TestWebSocketVariablesNameEveryBadField(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme Pay")
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			sub := subscribeWS(t, e, proto, m.TestSecret, `subscription($t: [EventType!], $a: ID) { events(types: $t, after: $a) { id } }`,
				map[string]any{"t": []any{"NOPE", nil}, "a": true})
			typ, payload := readMessage(t, sub.c)
			want := []string{"t[0]", "t[1]", "a"}
			if got := varFields(t, proto, answerErrors(t, proto, []byte(`{"errors":`+string(payload)+`}`))); typ != "error" || !slices.Equal(got, want) {
				t.Errorf("%s subscription: %s %s, want an error naming %q", proto, typ, payload, want)
			}
			// The mutation too, refused before it ran: an error message.
			c, ack, _, _ := initWS(t, e, proto, m.TestSecret, nil)
			if !ack {
				t.Fatalf("%s: no connection_ack", proto)
			}
			start := "subscribe"
			if proto == "graphql-ws" {
				start = "start"
			}
			if err := c.WriteJSON(map[string]any{"id": "m1", "type": start, "payload": map[string]any{"query": withdrawByVariable, "variables": withdrawVars}}); err != nil {
				t.Fatal(err)
			}
			typ, payload = readMessage(t, c)
			if got := varFields(t, proto, answerErrors(t, proto, []byte(`{"errors":`+string(payload)+`}`))); typ != "error" || !slices.Equal(got, withdrawVarsFields) {
				t.Errorf("%s mutation: %s, fields %q, want an error naming %q; payload %s", proto, typ, got, withdrawVarsFields, payload)
			}
		}
	})
}
