package server_test

import (
	"fmt"
	"strings"
	"testing"

	"merchantpay/server/servertest"
)

// spreadInto is n one-line operations, each with head, spreading a
// fragment of dirs @include(if: $u): all on one field (each repeat an
// error of its own), or each on a field of its own alias.
func spreadInto(n, dirs int, head string, aliased bool) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "query Q%d%s { ...F }\n", i, head)
	}
	b.WriteString("fragment F on Query { me {")
	if !aliased {
		return b.String() + " id" + strings.Repeat(" @include(if: $u)", dirs) + " } }"
	}
	for i := range dirs {
		fmt.Fprintf(&b, " i%d: id @include(if: $u)", i)
	}
	return b.String() + " } }"
}

// sameAlias is `{ me { x: f(0) x: f(1) ... } }` of n fields.
func sameAlias(n int, f func(int) string) string {
	var b strings.Builder
	b.WriteString("{ me {")
	for i := range n {
		b.WriteString(" x: " + f(i))
	}
	return b.String() + " } }"
}

func idOrName(i int) string {
	if i%2 == 0 {
		return "id"
	}
	return "name"
}

// Documents that multiplied validation's work (seconds and hundreds of MB
// each, within the document's written limits) are refused before
// validation in one short error, those that would have failed it and
// those that would have passed it alike.
func TestGraphQLValidationWorkRefusedBeforeValidation(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		for name, c := range map[string]struct{ q, why string }{
			"a fragment of 990 undefined variables in 990 operations": {spreadInto(990, 990, "", false), "fragments expanded"},
			// Valid: each operation defines $u, each directive is on a
			// field of its own.
			"a fragment of 450 defined variables in 450 operations": {spreadInto(450, 450, "($u: Boolean!)", true), "fragments expanded"},
			"999 conflicting fields under one alias":                {sameAlias(999, idOrName), "under one name"},
			"999 copies of one field under one alias":               {sameAlias(999, func(int) string { return "id" }), "under one name"},
		} {
			r := e.GQL(m.TestSecret, c.q, nil, "Accept", acceptGraphQL)
			errs, _ := r.JSON["errors"].([]any)
			if r.Status != 400 || r.Code() != "VALIDATION_ERROR" || len(errs) != 1 || len(r.Body) > 1000 || !strings.Contains(string(r.Body), c.why) {
				t.Errorf("%s: %d, %d bytes: %.300s", name, r.Status, len(r.Body), r.Body)
			}
		}
	})
}

// A document within every limit that still fails validation many times
// over is answered with its first 100 errors and one saying validation
// stopped there: it does not go on to find the rest. Documents of the
// same shapes that validate run.
func TestGraphQLValidationStopsAt100Errors(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		for name, q := range map[string]string{
			// 4,000 undefined-variable errors.
			"a fragment of 400 undefined variables in 10 operations": spreadInto(10, 400, "", false),
			// 2,500 pairs of fields that cannot be merged.
			"100 conflicting fields under one alias": sameAlias(100, idOrName),
		} {
			r := e.GQL(m.TestSecret, q, nil, "Accept", acceptGraphQL)
			errs, _ := r.JSON["errors"].([]any)
			if r.Status != 400 || r.Code() != "VALIDATION_ERROR" || len(errs) != 101 {
				t.Errorf("%s: %d with %d errors: %.300s", name, r.Status, len(errs), r.Body)
				continue
			}
			last, _ := errs[100].(map[string]any)
			ext, _ := last["extensions"].(map[string]any)
			if ext["code"] != "VALIDATION_ERROR" || !strings.Contains(fmt.Sprint(last["message"]), "validation stopped after 100 errors") {
				t.Errorf("%s: the last error: %v", name, last)
			}
		}
		r := e.GQL(m.TestSecret, spreadInto(1, 400, "($u: Boolean = true)", true), nil)
		if data, _ := r.JSON["data"].(map[string]any); data == nil || data["me"] == nil {
			t.Errorf("400 directives using a defined variable: %.300s", r.Body)
		}
		r = e.GQL(m.TestSecret, sameAlias(100, func(int) string { return "id" }), nil)
		data, _ := r.JSON["data"].(map[string]any)
		if me, _ := data["me"].(map[string]any); me == nil || me["x"] == nil {
			t.Errorf("100 copies of id under one alias: %.300s", r.Body)
		}
	})
}
