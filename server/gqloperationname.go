package server

import (
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// operationNameError replaces gqlgen's error for an operation it cannot
// find ("operation  not found", which names none) by one that says which
// operations the document has: operationName names none of them, or is
// missing where the document has several. A document of several
// operations has a name for each (validation refuses an anonymous one
// beside others), so the names listed are all of them.
func operationNameError(oc *graphql.OperationContext, params *graphql.RawParams, errs gqlerror.List) gqlerror.List {
	if len(errs) != 1 || oc == nil || oc.Operation != nil || oc.Doc == nil || len(oc.Doc.Operations) == 0 {
		return errs
	}
	names := make([]string, 0, len(oc.Doc.Operations))
	for _, op := range oc.Doc.Operations {
		if op.Name != "" {
			names = append(names, op.Name)
		}
	}
	msg := "the document has several operations: set operationName to the one to run"
	if params.OperationName != "" {
		msg = "the document has no operation named " + params.OperationName
	}
	if len(names) > 0 && len(names) <= 20 {
		msg += " (" + strings.Join(names, ", ") + ")"
	}
	return gqlerror.List{invalid(gqlerror.Errorf("%s", msg))}
}
