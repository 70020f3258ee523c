package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"merchantpay/graph"
	"merchantpay/internal/apperr"
	"merchantpay/internal/metrics"
	"merchantpay/internal/obs"
	"merchantpay/internal/store"
	"merchantpay/pipeline"
)

// presentError maps error kinds to extensions.code (apperr's table), naming bad
// fields, and never leaks internals.
func presentError(ctx context.Context, err error) *gqlerror.Error {
	gerr := graphql.DefaultErrorPresenter(ctx, err)
	err = store.Classify(err)
	var ae *apperr.Error
	var kind apperr.Kind
	enumMsg := enumRefusal(err)
	switch {
	case errors.As(err, &ae):
		kind = ae.Kind
		gerr.Message = ae.Message
		if len(ae.Fields) > 0 {
			fields := make([]apperr.FieldError, len(ae.Fields))
			for i, fe := range ae.Fields {
				fields[i] = apperr.FieldError{Field: graphQLName(fe.Field), Message: fe.Message}
			}
			setExt(gerr, "errors", fields)
		} else if kind == apperr.Validation && len(gerr.Path) > 1 {
			// A scalar's refusal (a Decimal that is not a number): the
			// field is the argument's path below the operation's field.
			setExt(gerr, "errors", []apperr.FieldError{{Field: argPath(gerr.Path[1:]), Message: ae.Message}})
		}
	case enumMsg != "":
		// gqlparser lets a variable's enum value through whatever its case
		// ("success"); gqlgen's generated code then refuses it with a plain
		// error. It is the client's mistake all the same.
		kind = apperr.Validation
		if len(gerr.Path) > 1 {
			setExt(gerr, "errors", []apperr.FieldError{{Field: argPath(gerr.Path[1:]), Message: enumMsg}})
		}
	case isGraphQLUserError(err, gerr):
		kind = apperr.Validation
		if code, _ := gerr.Extensions["code"].(string); code == "GRAPHQL_PARSE_FAILED" {
			kind = apperr.BadRequest
		} else if field := variableField(gerr.Path); field != "" {
			// A variable's value that does not fit its type (a required
			// input field left out, a string for an Int) names the field
			// as a refusal by the operation would.
			setExt(gerr, "errors", []apperr.FieldError{{Field: field, Message: gerr.Message}})
		}
	default:
		kind = apperr.Internal
		obs.Log(ctx).Log(ctx, obs.FailureLevel(ctx), "graphql resolver failed", "err", err, "path", gerr.Path.String())
	}
	if kind == apperr.Internal {
		gerr.Message = "internal error; quote request id " + obs.RequestID(ctx) + " to support"
	}
	setExt(gerr, "code", string(kind))
	if out, ok := ctx.Value(outcomeKey{}).(*outcome); ok {
		out.add(kind.Status())
	}
	if overHTTP, _ := ctx.Value(overHTTPKey{}).(bool); overHTTP {
		metrics.SetCode(ctx, string(kind))
	}
	return gerr
}

// graphQLName is a field name of the services' errors (REST's
// snake_case: "beneficiary.account_name", "documents[0].document_type") as
// GraphQL names the input field: "beneficiary.accountName".
func graphQLName(field string) string {
	if !strings.Contains(field, "_") {
		return field
	}
	var b strings.Builder
	upper := false
	for i := 0; i < len(field); i++ {
		switch c := field[i]; {
		case c == '_' && i > 0 && i+1 < len(field) && field[i-1] != '.' && field[i+1] != '.':
			upper = true
		case upper && c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
			upper = false
		default:
			b.WriteByte(c)
			upper = false
		}
	}
	return b.String()
}

// argPath writes an argument's path as the services' errors name fields,
// the mutation's input object left out: "amount", "items[0].amount".
func argPath(p ast.Path) string {
	if len(p) > 1 {
		if name, ok := p[0].(ast.PathName); ok && name == "input" {
			p = p[1:]
		}
	}
	var b strings.Builder
	for _, el := range p {
		switch el := el.(type) {
		case ast.PathIndex:
			b.WriteString("[" + strconv.Itoa(int(el)) + "]")
		case ast.PathName:
			if b.Len() > 0 {
				b.WriteString(".")
			}
			b.WriteString(string(el))
		}
	}
	return b.String()
}

// enumValues are the values of each enum of the schema, by enum name.
var enumValues = func() map[string][]string {
	out := map[string][]string{}
	for name, def := range graph.NewExecutableSchema(graph.Config{}).Schema().Types {
		if def.Kind == ast.Enum {
			for _, v := range def.EnumValues {
				out[name] = append(out[name], v.Name)
			}
		}
	}
	return out
}()

// enumRefusal is what to tell the client when err is gqlgen's refusal of a
// value of one of the schema's enums ("success is not a valid
// TransactionStatus"), and "" for any other error.
func enumRefusal(err error) string {
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(err) {
		err = u
	}
	const mark = " is not a valid "
	msg := err.Error()
	i := strings.LastIndex(msg, mark)
	if i < 0 {
		return ""
	}
	values, ok := enumValues[msg[i+len(mark):]]
	if !ok {
		return ""
	}
	return "must be one of " + strings.Join(values, ", ") + " (enum values are case-sensitive)"
}

// isGraphQLUserError tells gqlgen's own errors (parsing, validation, input
// coercion) from failures inside resolvers.
func isGraphQLUserError(err error, gerr *gqlerror.Error) bool {
	if code, _ := gerr.Extensions["code"].(string); code != "" {
		return true
	}
	var ge *gqlerror.Error
	if errors.As(err, &ge) && ge.Err == nil {
		return true
	}
	return false
}

func setExt(e *gqlerror.Error, k string, v any) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions[k] = v
}

// gqlFail answers a request refused before execution in GraphQL's error
// shape, with the HTTP status of its kind, in the media type its Accept
// header asks for (application/graphql-response+json: without data).
func gqlFail(w http.ResponseWriter, r *http.Request, err error) {
	metrics.SetCode(r.Context(), string(apperr.As(err).Kind))
	var re *pipeline.RetryError
	if errors.As(err, &re) {
		w.Header().Set("Retry-After", pipeline.RetryAfter(re.After))
	}
	media := negotiate(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", media)
	status := apperr.As(err).Kind.Status()
	pipeline.SetRetryAfter(w.Header(), status)
	w.WriteHeader(status)
	answer := failure(r.Context(), err)
	if media == mediaGraphQLResponse {
		delete(answer, "data")
	}
	_ = json.NewEncoder(w).Encode(answer)
}

// failure is the GraphQL answer to a request refused before execution.
func failure(ctx context.Context, err error) map[string]any {
	e := apperr.As(err) // a pipeline.RetryError unwraps to its *apperr.Error
	msg := e.Message
	if e.Kind == apperr.Internal {
		obs.Log(ctx).Log(ctx, obs.FailureLevel(ctx), "graphql request failed", "err", err)
		msg = "internal error; quote request id " + obs.RequestID(ctx) + " to support"
	}
	ext := map[string]any{"code": e.Kind}
	if len(e.Fields) > 0 {
		ext["errors"] = e.Fields
	}
	return map[string]any{
		"errors": []map[string]any{{"message": msg, "extensions": ext}},
		"data":   nil,
	}
}

// variableField is the field a refusal of a variable's value is about, as
// the services' errors name it: the path below "variable" ("variable",
// "input", "beneficiary", "bank" is "beneficiary.bank"); "" for an error
// about no variable.
func variableField(p ast.Path) string {
	if len(p) < 2 {
		return ""
	}
	if name, ok := p[0].(ast.PathName); !ok || name != "variable" {
		return ""
	}
	return argPath(p[1:])
}
