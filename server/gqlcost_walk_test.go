package server

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"merchantpay/graph"
)

var testSchema = graph.NewExecutableSchema(graph.Config{}).Schema()

// costOf validates query against the schema and measures it.
func costOf(t *testing.T, query string, vars map[string]any) (int, bool) {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(testSchema, query)
	if errs != nil {
		t.Fatalf("invalid query: %v", errs)
	}
	return newCostWalk(testSchema).Cost(doc.Operations[0], vars)
}

const dashboardPage = `events(first: 100) { edges { node { id event createdAt transaction { reference status amount currency } } } }`

// attackAlias is one of the 160 aliases of the request that kept the
// service busy for half a minute.
const attackAlias = `events(first: 100) { edges { node { deliveries { attempts { number } } } } }`

func aliases(n int, sel string) string {
	var b strings.Builder
	b.WriteString("query {")
	for i := range n {
		fmt.Fprintf(&b, " a%d: %s", i, sel)
	}
	b.WriteString(" }")
	return b.String()
}

func TestCostCalibration(t *testing.T) {
	one, _ := costOf(t, "{ "+dashboardPage+" }", nil)
	if one > 2000 || one < 500 {
		t.Errorf("one dashboard page costs %d: want it to pass the default limit of 2000 with room", one)
	}
	if ten, _ := costOf(t, aliases(10, dashboardPage), nil); ten <= 2000 {
		t.Errorf("ten dashboard pages cost %d: want over 2000", ten)
	}
	if attack, _ := costOf(t, aliases(160, attackAlias), nil); attack <= 100*2000 {
		t.Errorf("the attack costs %d: want far over 2000", attack)
	}
	if single, _ := costOf(t, "{ "+attackAlias+" }", nil); single <= 2000 {
		t.Errorf("one alias of the attack costs %d: 100 events' deliveries' attempts must not pass", single)
	}
}

func TestCostCountsListsAndLookUps(t *testing.T) {
	cases := []struct {
		name  string
		query string
		vars  map[string]any
		want  int
	}{
		// events 1+5, edges 1, 100 x (node 1, id 1)
		{"first multiplies the edges", `{ events(first: 100) { edges { node { id } } } }`, nil, 6 + 1 + 100*2},
		{"first from a variable", `query($n: Int) { events(first: $n) { edges { node { id } } } }`, map[string]any{"n": int64(7)}, 6 + 1 + 7*2},
		{"the default page without first", `{ events { edges { node { id } } } }`, nil, 6 + 1 + 20*2},
		{"first above the maximum counts the maximum", `{ events(first: 100000) { edges { node { id } } } }`, nil, 6 + 1 + 100*2},
		{"pageInfo counts once", `{ events(first: 100) { pageInfo { hasNextPage } } }`, nil, 6 + 2},
		// node 1 + deliveries (1 + 15) + 10 x (id 1)
		{"a per-item look-up", `{ events(first: 10) { edges { node { deliveries { id } } } } }`, nil, 6 + 1 + 10*(1+16+10)},
		{"a list without first counts its maximum", `{ webhookEndpoints { id } }`, nil, 6 + 50},
		{"aliases", `{ a: me { id } b: me { id } }`, nil, 4},
		{"fragments and inline fragments", `query { ...F ... on Query { me { id } } } fragment F on Query { me { id name } }`, nil, 5},
		{"fragments inside a list", `{ events(first: 10) { edges { node { ...E } } } } fragment E on Event { id event }`, nil, 6 + 1 + 10*3},
		{"the bank directory is flat", `{ banks(country: GH) { code branches { branchCode branchName } } }`, nil, 101 + 1 + 1 + 2},
		{"a mutation writes", `mutation { fundBalance(input: {currency: "NGN", amount: "1"}) { available } }`, nil, 11 + 1},
	}
	for _, c := range cases {
		got, intro := costOf(t, c.query, c.vars)
		if got != c.want || intro {
			t.Errorf("%s: cost %d (introspection %v), want %d", c.name, got, intro, c.want)
		}
	}
}

func TestTokensFor(t *testing.T) {
	for cost, want := range map[int]int{0: 1, 1: 1, 50: 1, 51: 2, 1002: 21, 2000: 40} {
		if got := tokensFor(cost); got != want {
			t.Errorf("tokensFor(%d) = %d, want %d", cost, got, want)
		}
	}
}

// Every list field of the schema has its maximum in costTable: a list the
// table lacks would count as one item.
func TestCostTableCoversEveryList(t *testing.T) {
	var missing []string
	for name, def := range testSchema.Types {
		if (def.Kind != ast.Object && def.Kind != ast.Interface) || strings.HasPrefix(name, "__") {
			continue
		}
		for _, f := range def.Fields {
			if f.Type.Elem == nil {
				continue
			}
			if fc, ok := costTable[name+"."+f.Name]; !ok || (fc.max < 1 && !fc.page) {
				missing = append(missing, name+"."+f.Name)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("list fields without a maximum in costTable: %s", strings.Join(missing, ", "))
	}
	for name, fc := range introspectionTable(testSchema) {
		if fc.max < 1 {
			t.Errorf("introspection list %s has no maximum", name)
		}
	}
}

func TestIntrospectionCost(t *testing.T) {
	q, err := os.ReadFile("testdata/graphiql-introspection.graphql")
	if err != nil {
		t.Fatal(err)
	}
	doc, errs := gqlparser.LoadQuery(testSchema, string(q))
	if errs != nil {
		t.Fatalf("GraphiQL's introspection query does not validate: %v", errs)
	}
	w := newCostWalk(testSchema)
	cost, intro := w.Cost(doc.Operations[0], nil)
	if !intro || tokensFor(cost) != 1 {
		t.Errorf("GraphiQL's introspection: cost %d (introspection %v), want one token", cost, intro)
	}
	full := w.FullCost(doc.Operations[0], nil)
	if full > w.maxIntrospection {
		t.Errorf("GraphiQL's introspection counts %d, over %d", full, w.maxIntrospection)
	}
	if depth(doc.Operations[0].SelectionSet, 0) <= maxDepth {
		t.Errorf("GraphiQL's introspection is no deeper than the depth limit: the exemption is untested")
	}

	twice := strings.Replace(string(q), "types {", "a: types { ...FullType } b: types {", 1)
	doc, errs = gqlparser.LoadQuery(testSchema, twice)
	if errs != nil {
		t.Fatal(errs)
	}
	if full := w.FullCost(doc.Operations[0], nil); full <= w.maxIntrospection {
		t.Errorf("GraphiQL's introspection twice over counts %d, within %d", full, w.maxIntrospection)
	}
	if _, intro := costOf(t, `{ __typename me { id } }`, nil); intro {
		t.Errorf("an operation with me is not introspection-only")
	}
}
