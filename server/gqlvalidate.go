package server

import (
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// validationRules is gqlparser's default rule set with every rule's errors
// counted into one count per validation: past maxErrors the walk is
// stopped (by a panic of a *validationStop, which boundedExecutor turns
// back into an answer), so a document that fails the same rule a million
// times costs the service no more than one that fails it a hundred times.
// The variants gqlgen swaps in when suggestions are disabled are counted
// too: they are in the set already, so gqlgen's AddRule keeps them.
//
// gqlgen calls it once for each document it validates; validation runs on
// one goroutine, so the count needs no lock.
func validationRules() *rules.Rules {
	stop := &validationStop{}
	set := rules.NewDefaultRules()
	out := &rules.Rules{}
	for name, rule := range set.GetInner() {
		out.AddRule(name, stop.counted(name, rule))
	}
	for _, r := range []core.Rule{rules.FieldsOnCorrectTypeRuleWithoutSuggestions, rules.ScalarLeafsRuleWithoutSuggestions} {
		out.AddRule(r.Name, stop.counted(r.Name, r.RuleFunc))
	}
	return out
}

// validationStop holds the first maxErrors errors of one validation.
type validationStop struct {
	errs gqlerror.List
}

// counted is rule with its errors kept in s; the error past maxErrors
// stops the validation.
func (s *validationStop) counted(name string, rule core.RuleFunc) core.RuleFunc {
	return func(observers *core.Events, addError core.AddErrFunc) {
		rule(observers, func(options ...core.ErrorOption) {
			if len(s.errs) >= maxErrors {
				panic(s)
			}
			err := &gqlerror.Error{Rule: name}
			for _, o := range options {
				o(err)
			}
			errcode.Set(err, errcode.ValidationFailed)
			s.errs = append(s.errs, err)
			addError(options...)
		})
	}
}

// answer is what a stopped validation is answered with: its errors so far
// and one saying that validation stopped there.
func (s *validationStop) answer() gqlerror.List {
	more := gqlerror.Errorf("validation stopped after %d errors, and more were left out of this answer: mend the ones above first", maxErrors)
	errcode.Set(more, errcode.ValidationFailed)
	setExt(more, "stopped", true)
	return append(append(gqlerror.List(nil), s.errs...), more)
}
