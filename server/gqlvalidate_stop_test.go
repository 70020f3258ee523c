package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/graph"
)

// Validation stops at maxErrors whether gqlgen keeps the rules that
// suggest names or swaps in those that do not.
func TestValidationStopsWithSuggestionsOnAndOff(t *testing.T) {
	var q strings.Builder
	q.WriteString("{")
	for i := range 300 {
		fmt.Fprintf(&q, " nope%d", i)
	}
	q.WriteString(" me { id { x } } }") // and a scalar with a selection
	for _, disabled := range []bool{false, true} {
		exec := executor.New(graph.NewExecutableSchema(graph.Config{}))
		exec.SetDefaultRulesFn(validationRules)
		exec.SetDisableSuggestion(disabled)
		_, errs := boundedExecutor{GraphExecutor: exec}.CreateOperationContext(graphql.StartOperationTrace(context.Background()), &graphql.RawParams{Query: q.String()})
		if len(errs) != maxErrors+1 || !strings.Contains(errs[maxErrors].Message, "validation stopped") {
			t.Errorf("suggestions disabled %v: %d errors", disabled, len(errs))
		}
	}
}

type panickingExecutor struct{ graphql.GraphExecutor }

func (panickingExecutor) CreateOperationContext(context.Context, *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	panic("boom")
}

// Any panic but a stopped validation's goes on up.
func TestOtherPanicsGoOn(t *testing.T) {
	defer func() {
		if p := recover(); p != "boom" {
			t.Errorf("recovered %v, want boom", p)
		}
	}()
	boundedExecutor{GraphExecutor: panickingExecutor{}}.CreateOperationContext(context.Background(), &graphql.RawParams{Query: "{ me { id } }"})
	t.Error("no panic")
}

// An answer of maxErrors+1 errors is cut to maxErrors and a note counting
// the one left out, unless it is a stopped validation's, whose last error
// is its own note.
func TestCutErrorsKeepsOnlyAStoppedValidationWhole(t *testing.T) {
	many := make(gqlerror.List, maxErrors+1)
	for i := range many {
		many[i] = gqlerror.Errorf("resolver error %d", i)
	}
	cut := cutErrors(many)
	if len(cut) != maxErrors+1 || cut[maxErrors].Extensions["omitted"] != 1 {
		t.Errorf("%d resolver errors: kept %d, last %v", len(many), len(cut), cut[len(cut)-1])
	}
	stopped := (&validationStop{errs: many[:maxErrors]}).answer()
	if kept := cutErrors(stopped); len(kept) != maxErrors+1 || kept[maxErrors] != stopped[maxErrors] {
		t.Errorf("a stopped validation's %d errors: kept %d, last %v", len(stopped), len(kept), kept[len(kept)-1])
	}
}
