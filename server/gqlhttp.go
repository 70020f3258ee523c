package server

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"merchantpay/internal/apperr"
	"merchantpay/internal/validate"
	"merchantpay/pipeline"
)

// GraphQL over plain HTTP, as the GraphQL-over-HTTP specification has it:
//
//   - POST with a JSON body {query, operationName, variables, extensions}
//     runs any operation but a subscription; GET with the same parameters
//     in the URL runs queries only (a mutation is 405 with Allow: POST).
//   - The answer is application/graphql-response+json when the client's
//     Accept prefers it, else application/json (the media type of clients
//     written before the specification, and of Accept: */* or no Accept).
//   - A request whose parameters are malformed (no query, a query that is
//     not a string, variables that are not an object) is 400.
//   - A document that does not parse or validate, variables that do not
//     coerce, and an operation refused before it runs (a subscription, too
//     deep, too big) are answered with errors only: 200 in
//     application/json, 400 in application/graphql-response+json, whose
//     answer then has no data entry.
//   - Refusals before any of that (401, 403, 405, 413, 415, 429, 503) keep
//     their status and extensions.code, in the negotiated media type.

// The two media types of a GraphQL answer over HTTP.
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// negotiate picks the answer's media type from an Accept header: the one
// of the two with the higher quality; of two equal, the one the client
// names itself over one it accepts through a wildcard, and of two named,
// the one listed first. Without an Accept header, with only wildcards, or
// with neither type acceptable, it is application/json: the header is then
// disregarded, which the specification allows as the alternative to 406.
func negotiate(accept string) string {
	type choice struct {
		q        float64
		explicit bool
		at       int
		matched  int // specificity of the range that set q: 0 none, 1 */*, 2 type/*, 3 exact
	}
	var gql, js choice
	for i, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v < 0 || v > 1 {
				continue
			}
			q = v
		}
		for _, c := range []struct {
			name string
			ch   *choice
		}{{mediaGraphQLResponse, &gql}, {mediaJSON, &js}} {
			spec := 0
			switch mt {
			case c.name:
				spec = 3
			case "application/*":
				spec = 2
			case "*/*":
				spec = 1
			}
			// The most specific range naming a type sets its quality.
			if spec > c.ch.matched {
				*c.ch = choice{q: q, explicit: spec == 3, at: i, matched: spec}
			}
		}
	}
	switch {
	case gql.q == 0:
		return mediaJSON
	case gql.q != js.q:
		if gql.q > js.q {
			return mediaGraphQLResponse
		}
		return mediaJSON
	case gql.explicit && (!js.explicit || gql.at < js.at):
		return mediaGraphQLResponse
	}
	return mediaJSON
}

// paramError is a malformed parameter of a GraphQL request: 400
// VALIDATION_ERROR naming it.
func paramError(field, msg string) error {
	return &apperr.Error{Kind: apperr.Validation, Message: "the GraphQL request's " + field + " " + msg,
		Fields: []apperr.FieldError{{Field: field, Message: msg}}}
}

// decodeParams reads a POST body's GraphQL request: query a string,
// operationName a string or null, variables and extensions objects or
// null. Numbers stay json.Number, as the resolvers expect them.
func decodeParams(body []byte) (*graphql.RawParams, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return nil, apperr.New(apperr.BadRequest, "the request body must be a JSON object: {\"query\": ..., \"variables\": ...}")
	}
	p := &graphql.RawParams{}
	q, ok := raw["query"]
	if !ok || isNull(q) {
		return nil, paramError("query", "is missing: send the GraphQL document as a string in query")
	}
	if json.Unmarshal(q, &p.Query) != nil {
		return nil, paramError("query", "must be a string")
	}
	if v, ok := raw["operationName"]; ok && !isNull(v) {
		if json.Unmarshal(v, &p.OperationName) != nil {
			return nil, paramError("operationName", "must be a string or null")
		}
	}
	var err error
	if p.Variables, err = decodeObject(raw["variables"], "variables"); err != nil {
		return nil, err
	}
	if p.Extensions, err = decodeObject(raw["extensions"], "extensions"); err != nil {
		return nil, err
	}
	return p, nil
}

// paramsFromURL reads a GET request's GraphQL request from its URL query:
// query, operationName, and variables and extensions as JSON text.
func paramsFromURL(rawQuery string) (*graphql.RawParams, error) {
	values, bad := validate.Query(rawQuery)
	if err := validate.QueryError(bad); err != nil {
		return nil, err
	}
	if !values.Has("query") {
		return nil, paramError("query", "is missing: send the GraphQL document in the URL's query parameter (GET runs queries; POST runs any operation)")
	}
	p := &graphql.RawParams{Query: values.Get("query"), OperationName: values.Get("operationName")}
	for _, name := range []string{"variables", "extensions"} {
		s := values.Get(name)
		if s == "" {
			continue
		}
		if !json.Valid([]byte(s)) {
			return nil, paramError(name, "must be a JSON object")
		}
		m, err := decodeObject(json.RawMessage(s), name)
		if err != nil {
			return nil, err
		}
		if name == "variables" {
			p.Variables = m
		} else {
			p.Extensions = m
		}
	}
	return p, nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// decodeObject decodes a parameter that must be a JSON object or null
// (absent: nil).
func decodeObject(v json.RawMessage, name string) (map[string]any, error) {
	if len(v) == 0 || isNull(v) {
		return nil, nil
	}
	if t := bytes.TrimSpace(v); len(t) == 0 || t[0] != '{' {
		return nil, paramError(name, "must be a JSON object or null")
	}
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, paramError(name, "must be a JSON object or null")
	}
	return m, nil
}

// operationOf is the operation a request would run: the one named
// operationName, else the document's only one; nil when the document does
// not parse or has no such operation (the executor then says why).
func operationOf(p *graphql.RawParams) (*ast.QueryDocument, *ast.OperationDefinition) {
	if p == nil || p.Query == "" {
		return nil, nil
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: p.Query})
	if err != nil {
		return nil, nil
	}
	var op *ast.OperationDefinition
	for _, o := range doc.Operations {
		if p.OperationName == "" || o.Name == p.OperationName {
			op = o
			if p.OperationName != "" {
				break
			}
		}
	}
	return doc, op
}

// decodeURL is the GET transport's decoding step: a query in the URL. A
// mutation is refused before it is looked at further: GET is safe by
// HTTP's rules, so anything that may follow a link or prefetch it must not
// change a thing.
func decodeURL(next pipeline.Handler) pipeline.Handler {
	return func(c *pipeline.Call) error {
		params, err := paramsFromURL(c.R.URL.RawQuery)
		if err != nil {
			return err
		}
		if _, op := operationOf(params); op != nil && op.Operation == ast.Mutation {
			c.W.Header().Set("Allow", http.MethodPost)
			return apperr.New(apperr.MethodNotAllowed, "a mutation is sent with POST; GET runs queries only")
		}
		g := c.Input.(*gqlCall)
		g.params = params
		overHTTP(c, g)
		return next(c)
	}
}

// httpTransport is the gqlgen transport of GraphQL over plain HTTP (GET
// and POST, checked by gqlHandler before they get here): it decodes the
// request's parameters, runs it, and answers in the negotiated media type
// with the status the specification asks for.
type httpTransport struct{}

func (httpTransport) Supports(r *http.Request) bool {
	return !websocket.IsWebSocketUpgrade(r) && (r.Method == http.MethodGet || r.Method == http.MethodPost)
}

func (httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	var params *graphql.RawParams
	var err error
	if r.Method == http.MethodGet {
		params, err = paramsFromURL(r.URL.RawQuery)
	} else {
		var body []byte
		if body, err = io.ReadAll(r.Body); err == nil {
			params, err = decodeParams(body)
		}
	}
	if err != nil {
		gqlFail(w, r, err)
		return
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	media := negotiate(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", media)
	ctx := r.Context()
	oc, errs := exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
		if media == mediaGraphQLResponse {
			// No data entry: the operation never ran.
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, requestErrors{Errors: resp.Errors, Extensions: resp.Extensions})
			return
		}
		w.WriteHeader(http.StatusOK)
		writeJSON(w, resp)
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	resp := responses(ctx)
	w.WriteHeader(http.StatusOK)
	writeJSON(w, resp)
}

// requestErrors is the answer to a request that failed before execution,
// in application/graphql-response+json: errors and no data entry.
type requestErrors struct {
	Errors     gqlerror.List  `json:"errors"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

func writeJSON(w io.Writer, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(requestErrors{Errors: gqlerror.List{{Message: "internal error: the answer could not be encoded",
			Extensions: map[string]any{"code": apperr.Internal}}}})
	}
	_, _ = w.Write(b)
}

// answerStatus is the HTTP status of a GraphQL answer rendered (and maybe
// stored for replay) by httpTransport: 400 for an
// application/graphql-response+json answer without data (a request that
// failed before execution), 200 for any other.
func answerStatus(contentType string, body []byte) int {
	if contentType != mediaGraphQLResponse {
		return http.StatusOK
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return http.StatusOK
	}
	if _, ok := top["data"]; ok {
		return http.StatusOK
	}
	return http.StatusBadRequest
}
