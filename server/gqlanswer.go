package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/internal/apperr"
)

// maxErrors is how many errors one answer lists; the rest are summed up in
// one more error. graphql-js stops validating at 100 errors for the same
// reason: past a few, more of them help nobody and cost the service.
const maxErrors = 100

// boundAnswers is a transport whose executor keeps every answer, errors
// included, within the size cap: its error list is cut at maxErrors and an
// answer still over GRAPHQL_MAX_RESPONSE_BYTES is replaced by one
// RESPONSE_TOO_LARGE error. operationLimits caps the data of an operation
// that ran; this covers the answers of those refused before they ran, whose
// errors are all they have.
type boundAnswers struct {
	graphql.Transport
	maxBytes int
}

func (t boundAnswers) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.Transport.Do(w, r, boundedExecutor{GraphExecutor: exec, maxBytes: t.maxBytes})
}

type boundedExecutor struct {
	graphql.GraphExecutor
	maxBytes int
}

// CreateOperationContext says, when operationName names no operation of
// the document, or is missing where the document has several, which
// operations there are (gqlgen's own error for a missing one names none:
// "operation  not found").
func (e boundedExecutor) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	oc, errs := e.GraphExecutor.CreateOperationContext(ctx, params)
	if len(errs) != 1 || oc == nil || oc.Operation != nil || oc.Doc == nil || len(oc.Doc.Operations) == 0 {
		return oc, errs
	}
	names := make([]string, 0, len(oc.Doc.Operations))
	for _, op := range oc.Doc.Operations {
		if op.Name != "" {
			names = append(names, op.Name)
		}
	}
	var msg string
	switch {
	case params.OperationName != "":
		msg = "the document has no operation named " + params.OperationName
	case len(names) < len(oc.Doc.Operations):
		msg = "the document has several operations, some without a name: send one operation, or name each and set operationName to the one to run"
	default:
		msg = "the document has several operations: set operationName to the one to run"
	}
	if len(names) > 0 && len(names) <= 20 {
		msg += " (" + strings.Join(names, ", ") + ")"
	}
	return oc, gqlerror.List{invalid(gqlerror.Errorf("%s", msg))}
}

func (e boundedExecutor) DispatchError(ctx context.Context, list gqlerror.List) *graphql.Response {
	return e.bound(ctx, e.GraphExecutor.DispatchError(ctx, cutErrors(list)))
}

func (e boundedExecutor) DispatchOperation(ctx context.Context, oc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	handler, ctx := e.GraphExecutor.DispatchOperation(ctx, oc)
	return func(ctx context.Context) *graphql.Response {
		resp := handler(ctx)
		if resp == nil {
			return nil
		}
		resp.Errors = cutErrors(resp.Errors)
		return e.bound(ctx, resp)
	}, ctx
}

// cutErrors keeps the first maxErrors errors of list and one more saying
// how many were left out, of the code of the last kept.
func cutErrors(list gqlerror.List) gqlerror.List {
	if len(list) <= maxErrors {
		return list
	}
	out := append(gqlerror.List(nil), list[:maxErrors]...)
	more := gqlerror.Errorf("and %d more errors, left out of this answer: mend the ones above first", len(list)-maxErrors)
	if code, ok := list[maxErrors-1].Extensions["code"]; ok {
		setExt(more, "code", code)
	}
	setExt(more, "omitted", len(list)-maxErrors)
	return append(out, more)
}

// bound replaces resp by a RESPONSE_TOO_LARGE error when its encoding
// would be over the cap. The data, encoded already, is measured by its
// length; only the errors and extensions are encoded to measure them.
func (e boundedExecutor) bound(ctx context.Context, resp *graphql.Response) *graphql.Response {
	if resp == nil || e.maxBytes <= 0 {
		return resp
	}
	n := len(resp.Data)
	if len(resp.Errors) > 0 {
		b, _ := json.Marshal(resp.Errors)
		n += len(b)
	}
	if len(resp.Extensions) > 0 {
		b, _ := json.Marshal(resp.Extensions)
		n += len(b)
	}
	if n <= e.maxBytes {
		return resp
	}
	return errorResponse(ctx, apperr.New(apperr.ResponseTooLarge,
		"the answer would be about %d bytes, over the limit of %d; mend the request's first errors, or ask for smaller pages or fewer fields", n, e.maxBytes))
}
