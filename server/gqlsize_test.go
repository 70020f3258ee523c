package server

import (
	"fmt"
	"strings"
	"testing"
)

// operations is n one-line operations, each with head, spreading F.
func operations(n int, head string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "query Q%d%s { ...F }\n", i, head)
	}
	return b.String()
}

// measure counts every kind of annotation validation checks on its own,
// up to the limit and not one past it.
func TestMeasureAnnotations(t *testing.T) {
	within := func(doc string) {
		t.Helper()
		if v := measure(doc); v != "" {
			t.Errorf("refused: %s\n%.200s", v, doc)
		}
	}
	refused := func(doc, why string) {
		t.Helper()
		if v := measure(doc); !strings.Contains(v, why) {
			t.Errorf("got %q, want %q\n%.200s", v, why, doc)
		}
	}
	const written = "directives, arguments, variable definitions"
	// An input object's fields: one argument and n-1 fields is n.
	object := func(n int) string {
		fields := make([]string, n-1)
		for i := range fields {
			fields[i] = fmt.Sprintf("f%d: 1", i)
		}
		return "{ me(x: {" + strings.Join(fields, ", ") + "}) { id } }"
	}
	within(object(maxAnnotations))
	refused(object(maxAnnotations+1), written)
	// An operation's directives.
	within("query" + strings.Repeat(" @a", maxAnnotations) + " { me { id } }")
	refused("query"+strings.Repeat(" @a", maxAnnotations+1)+" { me { id } }", written)
	// A fragment's directives.
	within("{ ...F } fragment F on Query" + strings.Repeat(" @a", maxAnnotations) + " { me { id } }")
	refused("{ ...F } fragment F on Query"+strings.Repeat(" @a", maxAnnotations+1)+" { me { id } }", written)
	// Directives on variable definitions: each definition and each of its
	// directives count.
	vars := func(n int) string {
		return "query($v: Int" + strings.Repeat(" @a", n-1) + ") { me { id } }"
	}
	within(vars(maxAnnotations))
	refused(vars(maxAnnotations+1), written)
}

// Validation checks a fragment's directives once for each operation that
// spreads it: their sum over the operations is bounded, the fragment
// measured once.
func TestMeasureExpandedAnnotations(t *testing.T) {
	const why = "their fragments expanded"
	flood := func(ops, dirs int, head string) string {
		return operations(ops, head) + "fragment F on Query { me { id" + strings.Repeat(" @include(if: $u)", dirs) + " } }"
	}
	aliased := func(ops, dirs int) string {
		var b strings.Builder
		for i := range dirs {
			fmt.Fprintf(&b, " i%d: id @include(if: $u)", i)
		}
		return operations(ops, "($u: Boolean!)") + "fragment F on Query { me {" + b.String() + " } }"
	}
	// What an auditor sent: 990 operations, a fragment of 990 directives.
	if v := measure(flood(990, 990, "")); !strings.Contains(v, why) {
		t.Errorf("990 x 990 undefined: %q", v)
	}
	// A valid one (each operation defines $u, each directive on a field
	// of its own): 450 keep the written counts within their limits.
	if v := measure(aliased(450, 450)); !strings.Contains(v, why) {
		t.Errorf("450 x 450 valid: %q", v)
	}
	// Several operations sharing a fragment pass up to the limit: 10
	// operations, each 1 variable plus 2 notes per directive, 9,990 and
	// 10,010.
	if v := measure(aliased(10, 499)); v != "" {
		t.Errorf("10 x 499: %q", v)
	}
	if v := measure(aliased(10, 500)); !strings.Contains(v, why) {
		t.Errorf("10 x 500: %q", v)
	}
}

// The fields sharing a response name in one selection set, fragments'
// included, are bounded: validation compares them pairwise.
func TestMeasureSameName(t *testing.T) {
	const why = "under one name"
	aliases := func(n int, field func(int) string) string {
		var b strings.Builder
		b.WriteString("{ me {")
		for i := range n {
			b.WriteString(" x: " + field(i))
		}
		return b.String() + " } }"
	}
	same := func(int) string { return "id" }
	mixed := func(i int) string {
		if i%2 == 0 {
			return "id"
		}
		return "name"
	}
	for name, doc := range map[string]string{
		"999 conflicting":   aliases(999, mixed),
		"999 the same":      aliases(999, same),
		"101 the same":      aliases(maxSameName+1, same),
		"through fragments": "{ me { ...A ...A } } fragment A on Merchant {" + strings.Repeat(" id", 30) + " ...B ... on Merchant { ...B } } fragment B on Merchant {" + strings.Repeat(" id", 25) + " }",
	} {
		if v := measure(doc); !strings.Contains(v, why) {
			t.Errorf("%s: %q", name, v)
		}
	}
	for name, doc := range map[string]string{
		"100 the same":     aliases(maxSameName, same),
		"in sibling sets":  "{" + strings.Repeat(" me { id id }", 50) + " }",
		"fragments of ids": "{ me { ...A ...B id } } fragment A on Merchant { id ... on Merchant { id } } fragment B on Merchant { id ...A }",
	} {
		if v := measure(doc); v != "" {
			t.Errorf("%s: %q", name, v)
		}
	}
}
