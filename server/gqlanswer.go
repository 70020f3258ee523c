package server

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/internal/apperr"
)

// maxErrors is how many errors one answer lists; the rest are summed up in
// one more error. Validation stops at that many (validationRules), as
// graphql-js's does: past a few, more of them help nobody and cost the
// service.
const maxErrors = 100

// boundAnswers is a transport whose executor keeps every answer, errors
// included, within the size cap: its error list is cut at maxErrors and an
// answer still over GRAPHQL_MAX_RESPONSE_BYTES is replaced by one
// RESPONSE_TOO_LARGE error: the answers of operations that ran (each event
// of a subscription) and of those refused before they ran, whose errors
// are all they have.
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

// CreateOperationContext answers a validation stopped at maxErrors (see
// validationRules) with the errors it found, and says which operations a
// document has when operationName names none of them (operationNameError).
func (e boundedExecutor) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (oc *graphql.OperationContext, errs gqlerror.List) {
	defer func() {
		if p := recover(); p != nil {
			stop, ok := p.(*validationStop)
			if !ok {
				panic(p)
			}
			oc = &graphql.OperationContext{RawQuery: params.Query, OperationName: params.OperationName,
				Extensions: params.Extensions, Headers: params.Headers, DisableIntrospection: true}
			errs = stop.answer()
		}
	}()
	oc, errs = e.GraphExecutor.CreateOperationContext(ctx, params)
	return oc, operationNameError(oc, params, errs)
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
// how many were left out, of the code of the last kept. A validation
// stopped at maxErrors ends with its own note (marked "stopped") and is
// kept whole.
func cutErrors(list gqlerror.List) gqlerror.List {
	if len(list) <= maxErrors {
		return list
	}
	if len(list) == maxErrors+1 && list[maxErrors].Extensions["stopped"] == true {
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
