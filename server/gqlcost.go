package server

import (
	"math"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"merchantpay/internal/money"
	"merchantpay/internal/page"
)

// The cost of a GraphQL operation, in points, is what it may make the
// service do, counted before it runs: each field costs one point; a list's
// selection counts once per item it may hold (a connection's edges as many
// as its first argument asks, else its default page; any other list its
// maximum below); and a field that looks something up in the database costs
// lookupPoints per look-up on top, for every parent item it is resolved on.
// An events(first: 100) page of ids, names, times and four fields of each
// transaction costs about 1,000 points; ten of them in one request, 10,000.

// lookupPoints is what one database look-up costs beside the one point of
// its field: a round trip to the database does the work of several
// in-memory fields.
const lookupPoints = 5

// costPerToken is how many points of cost take one token of the per-key
// rate limit (an operation takes one at least).
const costPerToken = 50

// introspectionPoints is what a __schema or __type field costs in an
// operation that selects nothing else: one token. Such an operation's
// answer is cached (see introspectionCache), so repeating it does no work;
// costWalk.maxIntrospection bounds its work the first time.
const introspectionPoints = costPerToken

// fieldCost is what the cost walk knows of one field, by "Type.field".
type fieldCost struct {
	// max is how many items a list field holds at most.
	max int
	// page marks a connection's edges: as many items as the connection's
	// first argument asks (page.DefaultLimit without it, page.MaxLimit at
	// most).
	page bool
	// lookups is how many database look-ups resolving the field takes.
	lookups int
	// static marks the built-in bank directory, held in memory and the
	// same for every caller: its selection counts once, not once per
	// item, and flat points stand for its size.
	static bool
	flat   int
}

// costTable declares every list field of the schema with its maximum (a
// test fails when the schema gains one this table lacks) and every field
// that looks something up.
var costTable = map[string]fieldCost{
	// Root fields: one look-up each, which aliases repeat.
	"Query.wallet":           {lookups: 1},
	"Query.wallets":          {lookups: 1},
	"Query.transaction":      {lookups: 1},
	"Query.transactions":     {lookups: 1},
	"Query.events":           {lookups: 1},
	"Query.rate":             {lookups: 1},
	"Query.balances":         {lookups: 1, max: len(money.All())}, // one per supported currency
	"Query.rates":            {lookups: 1, max: 50},               // the enabled pairs: 10 built in, operators add a few
	"Query.webhookEndpoints": {lookups: 1, max: 50},               // a merchant's endpoints: a few in practice
	// The bank directory: 98 Nigerian banks, or 23 Ghanaian ones with up
	// to 191 branches each (1,203 in all, about 200 KB with every field).
	// 100 points let 20 copies in one request, about the response cap.
	"Query.banks":   {max: 100, static: true, flat: 100},
	"Bank.branches": {max: 200, static: true},

	"WalletConnection.edges":      {page: true},
	"TransactionConnection.edges": {page: true},
	"EventConnection.edges":       {page: true},

	// The dashboard's lists. balanceHistory reads a page, then the sum
	// its running balance starts from; webhookDeliveries a page, then the
	// page's attempts.
	"Query.balanceHistory":            {lookups: 2},
	"Query.webhookDeliveries":         {lookups: 2},
	"BalanceEntryConnection.edges":    {page: true},
	"WebhookDeliveryConnection.edges": {page: true},
	// A mode's live keys: a pair, and a pair more per roll still in its
	// overlap.
	"Query.apiKeys":     {lookups: 1, max: 20},
	"Query.volumeToday": {lookups: 1, max: len(money.All())}, // one per supported currency
	// A transaction's events: one per change of status, a handful.
	"Transaction.events": {lookups: 1, max: 10},

	// Wallet.accounts reads the wallet's accounts: one query per wallet.
	"Wallet.accounts":      {lookups: 1, max: 10},
	"Compliance.documents": {max: 10},
	// Event.deliveries checks the event, then reads its deliveries and
	// their attempts: three queries per event. Each endpoint matching the
	// event has one delivery (and one more per redelivery).
	"Event.deliveries": {lookups: 3, max: 10},
	// Event.transaction decodes the event's stored copy of the
	// transaction: no query, but more work than a plain field.
	"Event.transaction": {flat: 1},
	// Loaded with the deliveries; one attempt per try of the retry
	// schedule (eight by default).
	"WebhookDelivery.attempts": {max: 10},
	"WebhookEndpoint.events":   {max: 10}, // one per event type at most
	"Mutation.redeliverEvent":  {max: 10},
}

// A mutation writes: each costs as much as two look-ups.
const mutationLookups = 2

// introspectionTable declares the lists of the introspection types with
// their maxima in schema s: how many types, fields of a type, and so on.
func introspectionTable(s *ast.Schema) map[string]fieldCost {
	most := func(n *int, v int) {
		if v > *n {
			*n = v
		}
	}
	var fields, inputs, enums, ifaces, possible, args, dirArgs, locations int
	for _, d := range s.Types {
		switch d.Kind {
		case ast.Object, ast.Interface:
			most(&fields, len(d.Fields))
			for _, f := range d.Fields {
				most(&args, len(f.Arguments))
			}
		case ast.InputObject:
			most(&inputs, len(d.Fields))
		case ast.Enum:
			most(&enums, len(d.EnumValues))
		}
		most(&ifaces, len(d.Interfaces))
		most(&possible, len(s.PossibleTypes[d.Name]))
	}
	for _, d := range s.Directives {
		most(&dirArgs, len(d.Arguments))
		most(&locations, len(d.Locations))
	}
	return map[string]fieldCost{
		"__Schema.types":        {max: len(s.Types)},
		"__Schema.directives":   {max: len(s.Directives)},
		"__Type.fields":         {max: fields},
		"__Type.inputFields":    {max: inputs},
		"__Type.enumValues":     {max: enums},
		"__Type.interfaces":     {max: max(ifaces, 1)},
		"__Type.possibleTypes":  {max: max(possible, 1)},
		"__Field.args":          {max: args},
		"__Directive.args":      {max: dirArgs},
		"__Directive.locations": {max: locations},
	}
}

// costWalk measures operations against one schema's table.
type costWalk struct {
	table map[string]fieldCost
	// maxIntrospection bounds an introspection-only operation's cost
	// counted as any other operation's (each list at its maximum for this
	// schema: an upper bound, several times what it really resolves); see
	// introspectionBound. Recursion through field types is refused by
	// validation already, after three levels.
	maxIntrospection int
}

func newCostWalk(s *ast.Schema) *costWalk {
	t := make(map[string]fieldCost, len(costTable)+16)
	for k, v := range costTable {
		t[k] = v
	}
	for k, v := range introspectionTable(s) {
		t[k] = v
	}
	c := &costWalk{table: t}
	c.maxIntrospection = introspectionBound(c, s)
	return c
}

// saturated is where counting stops: far above any limit, far below
// overflow.
const saturated = math.MaxInt64 / 4

// Cost is op's cost with variables vars (as validated), and whether op is
// an introspection-only operation (its root fields __schema, __type and
// __typename only), whose cost is counted in introspectionPoints.
func (c *costWalk) Cost(op *ast.OperationDefinition, vars map[string]any) (cost int, introspection bool) {
	if op == nil {
		return 0, false
	}
	introspection = introspectionOnly(op.SelectionSet, 0)
	if introspection {
		n := 0
		for _, f := range rootFieldList(op.SelectionSet, 0, nil) {
			if f.Name == "__typename" {
				n++
			} else {
				n += introspectionPoints
			}
		}
		return n, true
	}
	w := walker{c: c, vars: vars, mutation: op.Operation == ast.Mutation}
	return w.set(op.SelectionSet, page.DefaultLimit, 0), false
}

// FullCost is an introspection-only operation's cost counted as any
// other's, which maxIntrospection bounds.
func (c *costWalk) FullCost(op *ast.OperationDefinition, vars map[string]any) int {
	w := walker{c: c, vars: vars}
	return w.set(op.SelectionSet, page.DefaultLimit, 0)
}

type walker struct {
	c        *costWalk
	vars     map[string]any
	mutation bool
}

// set is the cost of one selection set; pageSize is the first argument of
// the connection it belongs to. Fragments are walked where they are
// spread; how large their expansion may be is bounded before this runs
// (see documentSize), and level stops cycles, which validation refuses.
func (w *walker) set(set ast.SelectionSet, pageSize, level int) int {
	if level > 64 {
		return 0
	}
	n := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			n = add(n, w.field(s, pageSize, level))
		case *ast.InlineFragment:
			n = add(n, w.set(s.SelectionSet, pageSize, level+1))
		case *ast.FragmentSpread:
			if s.Definition != nil {
				n = add(n, w.set(s.Definition.SelectionSet, pageSize, level+1))
			}
		}
	}
	return n
}

func (w *walker) field(f *ast.Field, pageSize, level int) int {
	parent := ""
	if f.ObjectDefinition != nil {
		parent = f.ObjectDefinition.Name
	}
	fc := w.c.table[parent+"."+f.Name]
	if w.mutation && parent == "Mutation" {
		fc.lookups += mutationLookups
	}
	own := 1 + fc.lookups*lookupPoints + fc.flat
	child := w.set(f.SelectionSet, firstArg(f, w.vars, pageSize), level+1)
	items := 1
	switch {
	case fc.static:
	case fc.page:
		items = pageSize
	case f.Definition != nil && f.Definition.Type != nil && f.Definition.Type.Elem != nil:
		items = max(fc.max, 1)
	}
	return add(own, mul(items, child))
}

// firstArg is the page size a field's first argument asks for, clamped to
// what a connection serves (a first outside that range is refused by its
// resolver); pageSize when the field has no first argument.
func firstArg(f *ast.Field, vars map[string]any, pageSize int) int {
	if f.Definition == nil || f.Definition.Arguments.ForName("first") == nil {
		return pageSize
	}
	n := page.DefaultLimit
	if a := f.Arguments.ForName("first"); a != nil && a.Value != nil {
		if v, err := a.Value.Value(vars); err == nil {
			switch v := v.(type) {
			case int64:
				n = int(min(max(v, 1), page.MaxLimit))
			case int:
				n = min(max(v, 1), page.MaxLimit)
			case float64:
				n = int(min(max(v, 1), page.MaxLimit))
			}
		}
	}
	return n
}

// introspectionOnly reports whether set's root fields, through its
// fragments, are all __schema, __type or __typename (and there is one).
func introspectionOnly(set ast.SelectionSet, level int) bool {
	fields := rootFieldList(set, level, nil)
	if len(fields) == 0 {
		return false
	}
	for _, f := range fields {
		if !strings.HasPrefix(f.Name, "__") {
			return false
		}
	}
	return true
}

// rootFieldList appends the fields of set, through its fragments, to out.
func rootFieldList(set ast.SelectionSet, level int, out []*ast.Field) []*ast.Field {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			out = append(out, s)
		case *ast.InlineFragment:
			if level < 16 {
				out = rootFieldList(s.SelectionSet, level+1, out)
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && level < 16 {
				out = rootFieldList(s.Definition.SelectionSet, level+1, out)
			}
		}
	}
	return out
}

// tokensFor is how many rate-limit tokens an operation of cost points takes.
func tokensFor(cost int) int {
	return max(1, (cost+costPerToken-1)/costPerToken)
}

func add(a, b int) int { return min(a+b, saturated) }

func mul(a, b int) int {
	if a != 0 && b > saturated/a {
		return saturated
	}
	return a * b
}
