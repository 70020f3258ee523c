package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

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
	return fmt.Sprintf("balances %s; events %v", norm(d["balances"]), evs)
}

// snake writes a GraphQL name as REST does: accountName → account_name.
func snake(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// camel writes a REST name as GraphQL does: beneficiary.account_name →
// beneficiary.accountName.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// parityEnums are the input fields GraphQL types as enums whose values
// REST takes in lower case (reject_amount_criteria it takes as GraphQL
// writes it).
var parityEnums = map[string]bool{"accountType": true, "transactionType": true,
	"feeBearer": true, "outcome": true}

// parityDecimals are the fields GraphQL types as Decimal strings: REST
// takes JSON numbers.
var parityDecimals = map[string]bool{"amount": true, "fromAmount": true, "toAmount": true}

// toREST writes a GraphQL input as REST's body: snake_case names, enums in
// lower case, decimals as numbers (a value that is no number stays a
// string, the same wrong input).
func toREST(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			switch s, isStr := val.(string); {
			case isStr && parityEnums[k]:
				val = strings.ToLower(s)
			case isStr && parityDecimals[k]:
				if _, err := decimal.NewFromString(s); err == nil {
					val = json.Number(s)
				}
			}
			out[snake(k)] = toREST(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = toREST(val)
		}
		return out
	}
	return v
}

// camelKeys renames a REST answer's keys as GraphQL names them.
func camelKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[camel(k)] = camelKeys(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = camelKeys(val)
		}
		return out
	}
	return v
}

// norm writes a value so that the transports' encodings compare equal:
// numbers and Decimal strings by value, enums without regard to case.
func norm(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case json.Number:
		return normScalar(string(x))
	case string:
		return normScalar(x)
	case bool:
		return fmt.Sprint(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = norm(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = camel(k) + ":" + norm(x[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v)
}

func normScalar(s string) string {
	if d, err := decimal.NewFromString(s); err == nil {
		return d.String()
	}
	return strings.ToLower(s)
}

// pick follows a dotted path.
func pick(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// compareEffect fails where the compared paths of the two results differ.
func compareEffect(t *testing.T, paths []string, restV, gqlV any) {
	t.Helper()
	rl, rIsList := restV.([]any)
	gl, gIsList := gqlV.([]any)
	if rIsList || gIsList {
		if len(rl) != len(gl) || len(rl) == 0 {
			t.Errorf("REST answered %d items, GraphQL %d (an empty list compares nothing)", len(rl), len(gl))
			return
		}
		for i := range rl {
			compareEffect(t, paths, rl[i], gl[i])
		}
		return
	}
	for _, path := range paths {
		rv, gv := pick(restV, path), pick(gqlV, path)
		if !hasPath(restV, path) || !hasPath(gqlV, path) {
			// A path one answer lacks is a mistake of the table (or a
			// field one transport dropped).
			t.Errorf("%s: REST has it %v, GraphQL %v", path, hasPath(restV, path), hasPath(gqlV, path))
			continue
		}
		if norm(rv) != norm(gv) {
			t.Errorf("%s: REST %s, GraphQL %s", path, norm(rv), norm(gv))
		}
	}
}

func hasPath(v any, path string) bool {
	keys := strings.Split(path, ".")
	for i, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
		if i == len(keys)-1 {
			return true
		}
	}
	return true
}

// refusal is an error answer: its code and the set of fields it names.
type refusal struct {
	code   string
	fields []string
	null   bool // GraphQL answered null without errors
}

func (r refusal) String() string {
	if r.null {
		return "null"
	}
	return fmt.Sprintf("%s %v", r.code, r.fields)
}

func restRefusal(r *servertest.Resp, rename func(string) string) refusal {
	out := refusal{code: r.Code()}
	if r.Status < 400 {
		out.code = fmt.Sprintf("status %d", r.Status)
	}
	for _, f := range r.Fields() {
		out.fields = append(out.fields, rename(f))
	}
	sort.Strings(out.fields)
	return out
}

func gqlRefusal(r *servertest.Resp, field string) refusal {
	errs, _ := r.JSON["errors"].([]any)
	if len(errs) == 0 {
		d, _ := r.JSON["data"].(map[string]any)
		if d != nil && d[field] == nil {
			return refusal{null: true}
		}
		return refusal{code: "no error"}
	}
	var out refusal
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

// clone deep-copies an input so that a bad case may edit it.
func clone(in map[string]any) map[string]any {
	raw, _ := json.Marshal(in)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

func (row parityRow) restRequest(p *parityParty, in map[string]any) (string, string, any) {
	if row.rest != nil {
		return row.rest(p, in)
	}
	return http.MethodPost, row.restPath, toREST(in)
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
	return camel(f)
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
		compareEffect(t, row.compare, camelKeys(r.JSON["data"]), row.gqlResult(g))
		if sa, sb := a.state(), b.state(); sa != sb {
			t.Errorf("after the operation REST left %s, GraphQL %s", sa, sb)
		}
	} else {
		e.GQL(b.key, row.gql, row.gqlVars(b, row.input(b))).GQLData()
	}
	for _, bad := range row.bad {
		before := b.state()
		in := clone(row.input(b))
		bad.edit(b, in)
		got := gqlRefusal(e.GQL(b.key, row.gql, row.gqlVars(b, in)), row.fields[0])
		want := refusal{code: bad.code, fields: slices.Sorted(slices.Values(bad.fields)), null: bad.nullOverGraphQL}
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
		in = clone(row.input(a))
		bad.edit(a, in)
		method, path, body := row.restRequest(a, in)
		gotREST := restRefusal(e.REST(method, path, a.key, body), row.restName)
		wantREST := refusal{code: bad.code, fields: want.fields}
		if bad.nullOverGraphQL {
			wantREST = refusal{code: "NOT_FOUND"}
		}
		if gotREST.String() != wantREST.String() {
			t.Errorf("%s over REST: %s, want %s", bad.name, gotREST, wantREST)
		}
		if after := a.state(); after != before {
			t.Errorf("%s over REST changed %s into %s", bad.name, before, after)
		}
	}
}

func jsonNum(s string) json.Number { return json.Number(s) }

func toString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}
