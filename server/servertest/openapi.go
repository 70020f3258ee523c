package servertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"merchantpay/rest"
	"merchantpay/rest/openapi"
)

// The REST answers every test receives are checked against the OpenAPI
// document the service serves (rest/openapi): a field, status or header
// that drifts from the description fails the test that saw it.

type contract struct {
	doc    *openapi3.T
	router routers.Router
	// errorSchema is the error envelope, for answers to paths and methods
	// the document has no operation for (404, 405).
	errorSchema *openapi3.Schema
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	raw, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("invalid: %w", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	errRef := doc.Components.Schemas["Error"]
	if errRef == nil || errRef.Value == nil {
		return nil, errors.New("components.schemas.Error is missing")
	}
	return &contract{doc: doc, router: router, errorSchema: errRef.Value}, nil
})

// CheckContract validates one answer of a REST path against the document:
// its status must be described for the operation, and its headers and body
// must match the description. It reports mismatches with t.Errorf, naming
// the route and the JSON path of the field.
func CheckContract(t testing.TB, method, path string, status int, header http.Header, body []byte) {
	t.Helper()
	if !strings.HasPrefix(path, rest.Prefix+"/") {
		return
	}
	c, err := loadContract()
	if err != nil {
		t.Errorf("openapi: the document does not load: %v", err)
		return
	}
	req, err := http.NewRequest(method, path, nil)
	if err != nil {
		return // a path no client could send; nothing to check
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		checkUnrouted(t, c, method, path, status, header, body, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("openapi: %s %s (operation %s) answered %d against the document:\n%s\nbody: %s",
			method, path, route.Operation.OperationID, status, describe(err), clip(body))
	}
}

// checkUnrouted checks an answer to a path or method the document has no
// operation for: the service must refuse it, in the error envelope.
func checkUnrouted(t testing.TB, c *contract, method, path string, status int, header http.Header, body []byte, findErr error) {
	t.Helper()
	var want int
	switch {
	case errors.Is(findErr, routers.ErrMethodNotAllowed):
		if method == http.MethodOptions && status == http.StatusNoContent {
			return // a CORS preflight of a public-key route: no body
		}
		want = http.StatusMethodNotAllowed
	case errors.Is(findErr, routers.ErrPathNotFound):
		want = http.StatusNotFound
	default:
		t.Errorf("openapi: %s %s: %v", method, path, findErr)
		return
	}
	switch {
	case status == want:
	case status == http.StatusUnauthorized || status == http.StatusTooManyRequests || status >= 500:
		// Refused before routing mattered (a bad key, the rate limit, a failure).
	default:
		t.Errorf("openapi: %s %s is not in the document, yet answered %d (want %d)", method, path, status, want)
		return
	}
	if method == http.MethodHead {
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("openapi: %s %s answered %d with a body that is not the error envelope: %v\nbody: %s", method, path, status, err, clip(body))
		return
	}
	if err := c.errorSchema.VisitJSON(v, openapi3.MultiErrors(), openapi3.EnableJSONSchema2020(), openapi3.VisitAsResponse()); err != nil {
		t.Errorf("openapi: %s %s answered %d, not the error envelope:\n%s\nbody: %s", method, path, status, describe(err), clip(body))
	}
}

// describe lists each mismatch on a line with the JSON path of its field.
func describe(err error) string {
	var lines []string
	var walk func(error)
	walk = func(err error) {
		var multi openapi3.MultiError
		if errors.As(err, &multi) {
			for _, e := range multi {
				walk(e)
			}
			return
		}
		var se *openapi3.SchemaError
		if errors.As(err, &se) {
			lines = append(lines, fmt.Sprintf("  at /%s: %s", strings.Join(se.JSONPointer(), "/"), se.Reason))
			return
		}
		lines = append(lines, "  "+err.Error())
	}
	walk(err)
	return strings.Join(lines, "\n")
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}
