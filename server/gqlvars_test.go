package server

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator"
)

// varsSchema has an input of every kind variableErrors walks.
var varsSchema = gqlparser.MustLoadSchema(&ast.Source{Name: "vars.graphql", Input: `
scalar Decimal
enum Color { RED GREEN }
input Inner { name: String!, n: Int, tags: [String!], color: Color, d: Decimal, withDefault: Int! = 3 }
input Outer { inner: Inner!, list: [Inner!]!, id: ID, f: Float, b: Boolean, nested: [[Int!]], maybe: [String] }
type Query { q(o: Outer, i: Int, s: String, c: Color, ids: [ID!], f: Float, b: Boolean, id: ID, d: Int): Int }
`})

const varsQuery = `query($o: Outer, $i: Int, $s: String, $c: Color, $ids: [ID!], $f: Float, $b: Boolean!, $id: ID, $d: Int = 4) {
	q(o: $o, i: $i, s: $s, c: $c, ids: $ids, f: $f, b: $b, id: $id, d: $d) }`

func operation(t testing.TB, schema *ast.Schema, query string) *ast.OperationDefinition {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(schema, query)
	if errs != nil {
		t.Fatalf("%s: %v", query, errs)
	}
	return doc.Operations[0]
}

// decodeVars decodes variables as the transports do, numbers kept exact.
func decodeVars(t testing.TB, s string) map[string]any {
	t.Helper()
	m, err := decodeObject(json.RawMessage(s), "variables")
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

func describe(errs gqlerror.List) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Path.String()+": "+e.Message)
	}
	return out
}

// Every value that does not fit is named, each at its path, where
// gqlparser's coercion names the first only.
func TestVariableErrorsListsEveryFailure(t *testing.T) {
	for _, tc := range []struct {
		vars string
		want []string
	}{
		{`{"b": true}`, nil},
		{`{"b": true, "o": {"inner": {"name": "a"}, "list": []}, "ids": [1, "x"], "i": 5, "f": 1.5, "c": "green"}`, nil},
		{`{}`, []string{"variable.b: must be defined"}},
		{`{"b": null, "i": "x", "f": "y", "s": 5, "c": "BLUE", "id": 1.5}`, []string{
			"variable.i: cannot use string as Int",
			"variable.s: must be a string",
			"variable.c: BLUE is not a valid Color",
			"variable.f: cannot use string as Float",
			"variable.b: cannot be null",
		}},
		{`{"b": 1, "i": 1.5, "ids": [null, true, 2], "c": 7, "id": false}`, []string{
			"variable.i: cannot use value 0 as Int",
			"variable.c: 7 is not a valid Color",
			"variable.ids[0]: cannot be null",
			"variable.ids[1]: cannot use bool as ID",
			"variable.b: cannot use string as Boolean",
			"variable.id: cannot use bool as ID",
		}},
		{`{"b": true, "c": true, "ids": "one", "o": []}`, []string{
			"variable.o: must be a Outer, not a slice",
			"variable.c: enums must be ints or strings",
		}},
		{`{"b": true, "o": {"zz": 1, "aa": 2, "__typename": "Outer", "list": [{"tags": "t"}, null, 3], "nested": [[1, null], 2], "f": true, "maybe": [null, 5]}}`, []string{
			"variable.o.aa: unknown field",
			"variable.o.zz: unknown field",
			"variable.o.inner: must be defined",
			"variable.o.list[0].name: must be defined",
			"variable.o.list[1]: cannot be null",
			"variable.o.list[2]: must be a Inner, not a string",
			"variable.o.f: cannot use bool as Float",
			"variable.o.nested[0][1]: cannot be null",
			"variable.o.maybe[1]: must be a string",
		}},
		{`{"b": true, "o": {"inner": {"name": null, "n": "1e3", "tags": 5, "color": "red", "d": "not a decimal", "withDefault": null}, "list": [{"name": 1, "tags": [2, "x", 3]}]}}`, []string{
			"variable.o.inner.name: cannot be null",
			"variable.o.inner.n: cannot use string as Int",
			"variable.o.inner.tags[0]: must be a string",
			"variable.o.inner.withDefault: cannot be null",
			"variable.o.list[0].name: must be a string",
			"variable.o.list[0].tags[0]: must be a string",
			"variable.o.list[0].tags[2]: must be a string",
		}},
	} {
		got := describe(variableErrors(varsSchema, operation(t, varsSchema, varsQuery), decodeVars(t, tc.vars)))
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.vars, got, tc.want)
		}
	}
}

// The audit's case, on the service's schema: the three fields the
// beneficiary lacks, where gqlparser names the first.
func TestVariableErrorsOfAWithdrawal(t *testing.T) {
	op := operation(t, testSchema, `mutation($i: WithdrawInput!){withdraw(input:$i){reference}}`)
	got := describe(variableErrors(testSchema, op, decodeVars(t, `{"i":{"amount":"1","currency":"NGN","beneficiary":{"accountName":"X"}}}`)))
	want := []string{"variable.i.beneficiary.email: must be defined", "variable.i.beneficiary.bank: must be defined",
		"variable.i.beneficiary.accountNumber: must be defined"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, e := range variableErrors(testSchema, op, decodeVars(t, `{"i":{"beneficiary":{"accountName":"X"}}}`)) {
		if e.Extensions["code"] != "GRAPHQL_VALIDATION_FAILED" {
			t.Errorf("%s: extensions %v, want gqlparser's validation code", e.Message, e.Extensions)
		}
	}
}

// variableErrors agrees with gqlparser's coercion on random values: it
// finds nothing where the coercion passes (but numbers given for Strings),
// finds the coercion's error where it fails, and finds nothing in what the
// coercion passed on (variableTypes walks that).
func TestVariableErrorsAgreeWithCoercion(t *testing.T) {
	op := operation(t, varsSchema, varsQuery)
	r := rand.New(rand.NewPCG(1, 2))
	failed, kinds := 0, map[string]bool{}
	for n := range 4000 {
		vars := map[string]any{}
		for _, vd := range op.VariableDefinitions {
			if present(r, vd.Type) {
				vars[vd.Variable] = randomValue(r, varsSchema, vd.Type, 0)
			}
		}
		raw, _ := json.Marshal(vars)
		ours := coercionOnly(variableErrors(varsSchema, op, decodeVars(t, string(raw))))
		coerced, err := validator.VariableValues(varsSchema, op, decodeVars(t, string(raw)))
		if err == nil {
			if len(ours) > 0 {
				t.Fatalf("case %d %s: coercion passes, variableErrors finds %q", n, raw, describe(ours))
			}
			if again := coercionOnly(variableErrors(varsSchema, op, coerced)); len(again) > 0 {
				t.Fatalf("case %d %s: in the coerced values variableErrors finds %q", n, raw, describe(again))
			}
			continue
		}
		failed++
		for _, kind := range []string{"must be defined", "cannot be null", "cannot use", "is not a valid", "enums must", "unknown field", "must be a"} {
			if strings.Contains(err.Error(), kind) {
				kinds[kind] = true
			}
		}
		theirs := describe(gqlerror.List{err.(*gqlerror.Error)})[0]
		if !slices.Contains(describe(ours), theirs) {
			t.Fatalf("case %d %s: coercion says %q, variableErrors %q", n, raw, theirs, describe(ours))
		}
	}
	// Each kind of refusal is met, and valid values as often.
	if failed < 1000 || failed > 3000 || len(kinds) < 7 {
		t.Errorf("%d of 4000 random cases fail coercion, with %d kinds of message: the generator explores too little", failed, len(kinds))
	}
}

// coercionOnly drops our own rule's errors (numbers for Strings).
func coercionOnly(errs gqlerror.List) gqlerror.List {
	return slices.DeleteFunc(errs, func(e *gqlerror.Error) bool { return e.Message == "must be a string" })
}

// present is whether a random value has a value of type t: a required
// one is seldom left out, so that valid values are met as often.
func present(r *rand.Rand, t *ast.Type) bool {
	if t.NonNull {
		return r.IntN(30) > 0
	}
	return r.IntN(3) > 0
}

// randomValue is most often a value of t, else any JSON value.
func randomValue(r *rand.Rand, schema *ast.Schema, t *ast.Type, depth int) any {
	junk := []any{nil, "x", "5", "-3", "1.5", "RED", "green", "blue", 5, 2.5, 1e300, json.Number("99999999999999999999"), true, false,
		[]any{}, map[string]any{}}
	if depth > 5 || r.IntN(16) == 0 {
		v := junk[r.IntN(len(junk))]
		if r.IntN(6) == 0 {
			v = []any{v, junk[r.IntN(len(junk))]}
		}
		return v
	}
	if t.Elem != nil {
		if r.IntN(8) == 0 {
			return randomValue(r, schema, t.Elem, depth+1) // a single value for a list
		}
		list := []any{}
		for range r.IntN(3) {
			list = append(list, randomValue(r, schema, t.Elem, depth+1))
		}
		return list
	}
	def := schema.Types[t.NamedType]
	switch {
	case def.Kind == ast.Enum:
		return []any{"RED", "GREEN", "red"}[r.IntN(3)]
	case def.Kind == ast.InputObject:
		obj := map[string]any{}
		for _, f := range def.Fields {
			if present(r, f.Type) {
				obj[f.Name] = randomValue(r, schema, f.Type, depth+1)
			}
		}
		if r.IntN(10) == 0 {
			obj[[]string{"bogus", "__typename", "Name"}[r.IntN(3)]] = 1
		}
		return obj
	}
	switch t.NamedType {
	case "Int":
		return []any{7, "8", -2}[r.IntN(3)]
	case "Float":
		return []any{1.25, 3, "4.5"}[r.IntN(3)]
	case "String", "Decimal":
		return []any{"s", "", "12.50"}[r.IntN(3)]
	case "Boolean":
		return r.IntN(2) == 0
	case "ID":
		return []any{"id", 12}[r.IntN(2)]
	}
	return nil
}

// A walk of valid variables allocates nothing: it runs on every request
// that has variables.
func TestVariableErrorsAllocatesNothingWhenValid(t *testing.T) {
	op := operation(t, testSchema, `mutation($i: WithdrawInput!){withdraw(input:$i){reference}}`)
	vars := decodeVars(t, `{"i":{"amount":"1000","currency":"NGN","reference":"pay-1","feeBearer":"MERCHANT",
		"beneficiary":{"email":"ada@example.com","bank":"058","accountName":"Ada Obi","accountNumber":"0123456789"}}}`)
	if errs := variableErrors(testSchema, op, vars); errs != nil {
		t.Fatalf("valid variables: %q", describe(errs))
	}
	if n := testing.AllocsPerRun(100, func() { variableErrors(testSchema, op, vars) }); n != 0 {
		t.Errorf("%v allocations per walk of valid variables, want 0", n)
	}
}

// fakeExecutor answers CreateOperationContext with errs.
type fakeExecutor struct {
	graphql.GraphExecutor
	op   *ast.OperationDefinition
	errs gqlerror.List
}

func (f fakeExecutor) CreateOperationContext(context.Context, *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	return &graphql.OperationContext{Operation: f.op}, f.errs
}

// The executor of listVariableErrors lists every bad value of a request
// refused for one, keeps the refusal it was given should its walk not find
// it, and leaves other answers alone.
func TestVariablesExecutor(t *testing.T) {
	op := operation(t, varsSchema, varsQuery)
	params := &graphql.RawParams{Variables: decodeVars(t, `{"b": true, "i": "x", "c": "BLUE"}`)}
	refusal := func(msg string, path ...ast.PathElement) *gqlerror.Error {
		return invalid(gqlerror.ErrorPathf(append(ast.Path{ast.PathName("variable")}, path...), "%s", msg))
	}
	for _, tc := range []struct {
		name string
		errs gqlerror.List
		want []string
	}{
		{"coercion's first", gqlerror.List{refusal("cannot use string as Int", ast.PathName("i"))},
			[]string{"variable.i: cannot use string as Int", "variable.c: BLUE is not a valid Color"}},
		{"one the walk does not find", gqlerror.List{refusal("odd", ast.PathName("b"))},
			[]string{"variable.b: odd", "variable.i: cannot use string as Int", "variable.c: BLUE is not a valid Color"}},
		{"no variable's", gqlerror.List{invalid(gqlerror.Errorf("too deep"))}, []string{": too deep"}},
		{"several", gqlerror.List{refusal("a", ast.PathName("i")), refusal("b", ast.PathName("c"))}, []string{"variable.i: a", "variable.c: b"}},
		{"none", nil, nil},
	} {
		_, errs := variablesExecutor{GraphExecutor: fakeExecutor{op: op, errs: tc.errs}, schema: varsSchema}.
			CreateOperationContext(context.Background(), params)
		if got := describe(errs); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
