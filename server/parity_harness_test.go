package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"testing"

	"merchantpay/server/servertest"
)

// parityRow is one operation as REST and GraphQL both expose it: the same
// input, written once in GraphQL's naming, goes through each transport on a
// merchant of its own, and the two answers, balances and events must agree.
type parityRow struct {
	name   string
	routes []string // REST routes it covers, "METHOD /pattern"
	fields []string // GraphQL root fields it covers
	live   bool     // called with the live secret key
	// setup prepares one merchant (the same steps for both) and may note
	// values the input needs in p.vals.
	setup func(p *parityParty)
	// input is the valid input in GraphQL naming (enums in upper case,
	// Decimals as strings).
	input func(p *parityParty) map[string]any
	// rest turns an input into the REST request; nil: POST restPath with
	// the input as a snake_case body.
	rest     func(p *parityParty, in map[string]any) (method, path string, body any)
	restPath string
	// gql is the GraphQL document; its variables are {"input": in} unless
	// vars is set.
	gql  string
	vars func(p *parityParty, in map[string]any) map[string]any
	// result picks the compared value from the GraphQL data (default: the
	// first root field's value).
	result func(data map[string]any) any
	// compare lists the paths (GraphQL naming) whose values must agree; a
	// list is compared element by element.
	compare []string
	// restFields turns a REST error's field name into GraphQL's where the
	// two are named apart by design (query parameters, a body that GraphQL
	// nests under account); nil: the camelCase rule alone.
	restFields func(string) string
	bad        []parityBad
}

// parityBad is one refused input: both transports must answer the same
// code and name the same fields, and change nothing. A GraphQL document
// whose variables do not fit their types (a required field left out) is
// refused before the operation runs, so it names only those fields: a bad
// case mixes no such field with other mistakes.
type parityBad struct {
	name   string
	edit   func(p *parityParty, in map[string]any)
	code   string
	fields []string // in GraphQL naming
	// nullOverGraphQL: a query that REST answers 404 NOT_FOUND answers
	// null over GraphQL, as GraphQL does for a missing object.
	nullOverGraphQL bool
}

// parityParty is one merchant driving one transport.
type parityParty struct {
	t    *testing.T
	e    *servertest.Env
	m    servertest.Merchant
	key  string
	vals map[string]string
}

func (p *parityParty) restCall(method, path string, body any) map[string]any {
	p.t.Helper()
	r := p.e.REST(method, path, p.key, body)
	if r.Status >= 300 {
		p.t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
	}
	return r.JSON
}

func (p *parityParty) gqlCall(query string, vars map[string]any) map[string]any {
	p.t.Helper()
	return p.e.GQL(p.key, query, vars).GQLData()
}

// state is what an operation may change that both transports must change
// alike: balances and the types of the events emitted.
func (p *parityParty) state() string {
	p.t.Helper()
	d := p.gqlCall(`{ balances { currency available pending } events(first: 100) { edges { node { event } } } }`, nil)
	var evs []string
	for _, e := range d["events"].(map[string]any)["edges"].([]any) {
		evs = append(evs, e.(map[string]any)["node"].(map[string]any)["event"].(string))
	}
	sort.Strings(evs)
	return fmt.Sprintf("balances %s; events %v", parityNorm(d["balances"]), evs)
}

// parityRefusal is an error answer: its code and the set of fields it names.
type parityRefusal struct {
	code   string
	fields []string
	null   bool // GraphQL answered null without errors
}

func (r parityRefusal) String() string {
	if r.null {
		return "null"
	}
	return fmt.Sprintf("%s %v", r.code, r.fields)
}

func parityRESTRefusal(r *servertest.Resp, rename func(string) string) parityRefusal {
	out := parityRefusal{code: r.Code()}
	if r.Status < 400 {
		out.code = fmt.Sprintf("status %d", r.Status)
	}
	for _, f := range r.Fields() {
		out.fields = append(out.fields, rename(f))
	}
	sort.Strings(out.fields)
	return out
}

func parityGQLRefusal(r *servertest.Resp, field string) parityRefusal {
	errs, _ := r.JSON["errors"].([]any)
	if len(errs) == 0 {
		d, _ := r.JSON["data"].(map[string]any)
		if d != nil && d[field] == nil {
			return parityRefusal{null: true}
		}
		return parityRefusal{code: "no error"}
	}
	var out parityRefusal
	seen := map[string]bool{}
	for i, x := range errs {
		ext, _ := x.(map[string]any)["extensions"].(map[string]any)
		code, _ := ext["code"].(string)
		if i == 0 {
			out.code = code
		} else if code != out.code {
			out.code += "+" + code
		}
		fes, _ := ext["errors"].([]any)
		for _, fe := range fes {
			if f, ok := fe.(map[string]any)["field"].(string); ok && !seen[f] {
				seen[f] = true
				out.fields = append(out.fields, f)
			}
		}
	}
	sort.Strings(out.fields)
	return out
}

// parityClone deep-copies an input so that a bad case may edit it.
func parityClone(in map[string]any) map[string]any {
	raw, _ := json.Marshal(in)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

func (row parityRow) restRequest(p *parityParty, in map[string]any) (string, string, any) {
	if row.rest != nil {
		return row.rest(p, in)
	}
	return http.MethodPost, row.restPath, parityToREST(in)
}

func (row parityRow) gqlVars(p *parityParty, in map[string]any) map[string]any {
	if row.vars != nil {
		return row.vars(p, in)
	}
	return map[string]any{"input": in}
}

func (row parityRow) gqlResult(data map[string]any) any {
	if row.result != nil {
		return row.result(data)
	}
	return data[row.fields[0]]
}

func (row parityRow) restName(f string) string {
	if row.restFields != nil {
		return row.restFields(f)
	}
	return parityCamel(f)
}

// runParityRow runs one row: the valid input through both transports, then
// each bad input through both.
func runParityRow(t *testing.T, e *servertest.Env, row parityRow, n int) {
	party := func(side string) *parityParty {
		m := e.Merchant(fmt.Sprintf("Parity %s %d %s", row.name, n, side))
		p := &parityParty{t: t, e: e, m: m, key: m.TestSecret, vals: map[string]string{}}
		if row.live {
			p.key = m.LiveSecret
		}
		if row.setup != nil {
			row.setup(p)
		}
		return p
	}
	a, b := party("rest"), party("gql")
	hasREST := len(row.routes) > 0
	if hasREST && a.state() != b.state() {
		t.Fatalf("the two merchants differ before the operation: %s vs %s", a.state(), b.state())
	}
	if hasREST {
		method, path, body := row.restRequest(a, row.input(a))
		r := e.REST(method, path, a.key, body)
		if r.Status >= 300 {
			t.Fatalf("REST %s %s: %d %s", method, path, r.Status, r.Body)
		}
		g := e.GQL(b.key, row.gql, row.gqlVars(b, row.input(b))).GQLData()
		parityCompare(t, row.compare, parityCamelKeys(r.JSON["data"]), row.gqlResult(g))
		if sa, sb := a.state(), b.state(); sa != sb {
			t.Errorf("after the operation REST left %s, GraphQL %s", sa, sb)
		}
	} else {
		e.GQL(b.key, row.gql, row.gqlVars(b, row.input(b))).GQLData()
	}
	for _, bad := range row.bad {
		before := b.state()
		in := parityClone(row.input(b))
		bad.edit(b, in)
		got := parityGQLRefusal(e.GQL(b.key, row.gql, row.gqlVars(b, in)), row.fields[0])
		want := parityRefusal{code: bad.code, fields: slices.Sorted(slices.Values(bad.fields)), null: bad.nullOverGraphQL}
		if want.null {
			want.code, want.fields = "", nil
		}
		if got.String() != want.String() {
			t.Errorf("%s over GraphQL: %s, want %s", bad.name, got, want)
		}
		if after := b.state(); after != before {
			t.Errorf("%s over GraphQL changed %s into %s", bad.name, before, after)
		}
		if !hasREST {
			continue
		}
		before = a.state()
		in = parityClone(row.input(a))
		bad.edit(a, in)
		method, path, body := row.restRequest(a, in)
		gotREST := parityRESTRefusal(e.REST(method, path, a.key, body), row.restName)
		wantREST := parityRefusal{code: bad.code, fields: want.fields}
		if bad.nullOverGraphQL {
			wantREST = parityRefusal{code: "NOT_FOUND"}
		}
		if gotREST.String() != wantREST.String() {
			t.Errorf("%s over REST: %s, want %s", bad.name, gotREST, wantREST)
		}
		if after := a.state(); after != before {
			t.Errorf("%s over REST changed %s into %s", bad.name, before, after)
		}
	}
}
