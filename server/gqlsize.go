package server

import (
	"context"
	"crypto/sha256"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
)

// Limits on a GraphQL document's size, applied before gqlparser validates
// it and the cost walk (see costWalk) measures it. gqlparser walks the
// document with every fragment spread expanded anew, and gqlparser's
// "overlapping fields can be merged" rule compares the fields of a
// selection set pairwise: 40 fragments each spreading the one before twice
// (1.7 KB) kept a core busy for hours, 10,000 aliases of __schema (which
// gqlgen's complexity does not count) answered 644 MB, and 60,000 copies of
// one field took 15 minutes to validate.
const (
	// maxSelections bounds the fields and spreads written in a document.
	maxSelections = 1000
	// maxExpanded bounds the fields of an operation with its fragments
	// expanded, introspection's included.
	maxExpanded = 2000
	// maxAnnotations bounds the directives, arguments and variable
	// definitions written in a document, and the values written in them
	// (each item of a list, each field of an input object). Validation
	// checks each of them and may refuse each with an error of its own:
	// 300,000 copies of an unknown directive (900 KB) answered 83 MB of
	// errors after seconds of work.
	maxAnnotations = 2000
	// maxExpandedAnnotations bounds the directives, arguments and values
	// of all the operations of a document, each with its fragments
	// expanded: validation checks a fragment's once for every operation
	// that spreads it (whether each variable it uses is defined, and of
	// the right type). A fragment of 990 @include(if: $u) spread into 990
	// one-line operations (36 KB) took 4 s and 669 MB to validate.
	maxExpandedAnnotations = 10000
	// maxSameName bounds the fields of one selection set, its fragments'
	// included, that share one response name: validation compares them
	// pairwise (whether they can be merged), and 999 aliases x of a 7 KB
	// document made 500,000 comparisons and 249,001 errors. A client
	// repeats a name when several of its fragments select the same field
	// (id, __typename) in one place: a few times, tens in a large app,
	// never a hundred.
	maxSameName = 100
)

// documentSize refuses documents over those limits, measured in time
// linear in their length (each fragment's expanded size is computed once).
// Verdicts are cached by a digest of the query text: the texts refused are
// the largest (up to a request body's limit each), and a thousand of them
// kept as keys would hold a gigabyte.
type documentSize struct {
	verdicts *lru.LRU[string]
}

func newDocumentSize() documentSize { return documentSize{verdicts: lru.New[string](1000)} }

func (documentSize) ExtensionName() string                   { return "DocumentSize" }
func (documentSize) Validate(graphql.ExecutableSchema) error { return nil }

func (d documentSize) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	sum := sha256.Sum256([]byte(p.Query))
	key := string(sum[:])
	verdict, ok := d.verdicts.Get(ctx, key)
	if !ok {
		verdict = measure(p.Query)
		d.verdicts.Add(ctx, key, verdict)
	}
	if verdict != "" {
		return invalid(gqlerror.Errorf("%s", verdict))
	}
	return nil
}

// measure is "" for a document within the limits, else why it is not.
// A document that does not parse is left to gqlgen, which says why.
func measure(query string) string {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return ""
	}
	m := newMeasurer(doc)
	written, notes := 0, 0
	// sets are the selection sets whose fields validation compares by
	// name (an inline fragment's are its parent's).
	var sets []ast.SelectionSet
	var count func(ast.SelectionSet, bool)
	count = func(set ast.SelectionSet, own bool) {
		if own {
			sets = append(sets, set)
		}
		for _, sel := range set {
			written++
			switch s := sel.(type) {
			case *ast.Field:
				notes += arguments(s.Arguments) + directives(s.Directives)
				if len(s.SelectionSet) > 0 {
					count(s.SelectionSet, true)
				}
			case *ast.InlineFragment:
				notes += directives(s.Directives)
				count(s.SelectionSet, false)
			case *ast.FragmentSpread:
				notes += directives(s.Directives)
			}
		}
	}
	for _, op := range doc.Operations {
		notes += operationNotes(op)
		count(op.SelectionSet, true)
	}
	for _, f := range doc.Fragments {
		notes += directives(f.Directives)
		for _, v := range f.VariableDefinition {
			notes += 1 + values(v.DefaultValue) + directives(v.Directives)
		}
		count(f.SelectionSet, true)
	}
	if written > maxSelections {
		return "the document selects more than " + strconv.Itoa(maxSelections) + " fields and fragments"
	}
	if notes > maxAnnotations {
		return "the document writes more than " + strconv.Itoa(maxAnnotations) + " directives, arguments, variable definitions and values in them"
	}
	same := 0
	for _, set := range sets {
		same = max(same, m.sameName(set))
	}
	if same > maxSameName {
		return "a selection set selects more than " + strconv.Itoa(maxSameName) + " fields under one name (alias), its fragments' included"
	}
	sum := 0
	for _, op := range doc.Operations {
		size := m.expanded(op.SelectionSet)
		if size.fields > maxExpanded {
			return "the operation selects more than " + strconv.Itoa(maxExpanded) + " fields with its fragments expanded"
		}
		sum += operationNotes(op) + size.notes
		if sum > maxExpandedAnnotations {
			return "the document's operations, their fragments expanded, use more than " + strconv.Itoa(maxExpandedAnnotations) +
				" directives, arguments and values in them: spread large fragments into fewer operations"
		}
	}
	return ""
}

// operationNotes counts op's own directives and variable definitions.
func operationNotes(op *ast.OperationDefinition) int {
	n := directives(op.Directives)
	for _, v := range op.VariableDefinitions {
		n += 1 + values(v.DefaultValue) + directives(v.Directives)
	}
	return n
}

// arguments counts args and the values written in them.
func arguments(args ast.ArgumentList) int {
	n := 0
	for _, a := range args {
		n += 1 + values(a.Value)
	}
	return n
}

// directives counts dirs and their arguments.
func directives(dirs ast.DirectiveList) int {
	n := 0
	for _, d := range dirs {
		n += 1 + arguments(d.Arguments)
	}
	return n
}

// values counts the items and fields written inside v (a list's items, an
// input object's fields, and theirs in turn).
func values(v *ast.Value) int {
	if v == nil {
		return 0
	}
	n := 0
	for _, c := range v.Children {
		n += 1 + values(c.Value)
	}
	return n
}
