package server

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Variables whose values do not fit their types are refused before the
// operation runs, every bad value named at once, as a document's own
// validation names every bad literal. gqlparser's coercion
// (validator.VariableValues, run by gqlgen's executor) stops at the first;
// variableErrors walks them all by the same rules, with the same messages
// and paths, and one rule of ours: a number where a String belongs is
// refused (variables are decoded keeping numbers exact, as json.Number, a
// string to gqlparser), as REST refuses the same body as a wrong type.

// variableErrors is every value of vars that does not fit its variable's
// type in op, each at its path ("variable", name, field or index...), in
// the order of op's variable definitions and the input types' fields.
func variableErrors(schema *ast.Schema, op *ast.OperationDefinition, vars map[string]any) gqlerror.List {
	if op == nil || len(op.VariableDefinitions) == 0 {
		return nil
	}
	w := varWalk{schema: schema}
	for _, vd := range op.VariableDefinitions {
		w.push(vd.Variable, -1)
		w.variable(vd, vars)
		w.pop()
	}
	return w.errs
}

// varWalk is one walk of an operation's variables. The path is a stack of
// frames, made an ast.Path only for an error: a walk that finds nothing
// does not allocate. A value nested deeper than the stack holds is left to
// gqlparser's coercion.
type varWalk struct {
	schema *ast.Schema
	frames [64]varFrame
	n      int // frames in use
	errs   gqlerror.List
}

// varFrame is one step of a path: a field's name, or a list's index
// (index >= 0).
type varFrame struct {
	name  string
	index int
}

func (w *varWalk) push(name string, index int) { w.frames[w.n] = varFrame{name, index}; w.n++ }
func (w *varWalk) pop()                        { w.n-- }

func (w *varWalk) path() ast.Path {
	p := make(ast.Path, 0, w.n+1)
	p = append(p, ast.PathName("variable"))
	for _, f := range w.frames[:w.n] {
		if f.index >= 0 {
			p = append(p, ast.PathIndex(f.index))
		} else {
			p = append(p, ast.PathName(f.name))
		}
	}
	return p
}

func (w *varWalk) fail(format string, args ...any) {
	w.errs = append(w.errs, invalid(gqlerror.ErrorPathf(w.path(), format, args...)))
}

// variable checks one variable's value, its default if it has none.
// Document validation, which runs first, has refused a variable of a type
// that is not an input type or unknown, and a default that does not fit.
func (w *varWalk) variable(vd *ast.VariableDefinition, vars map[string]any) {
	v, ok := vars[vd.Variable]
	if !ok {
		if vd.DefaultValue == nil {
			if vd.Type.NonNull {
				w.fail("must be defined")
			}
			return
		}
		v, _ = vd.DefaultValue.Value(nil) // a constant: validation read it
	}
	if v == nil {
		if vd.Type.NonNull {
			w.fail("cannot be null")
		}
		return
	}
	// A number given for a variable typed Int or Float itself is
	// converted first, as gqlparser does.
	if n, isNumber := v.(json.Number); isNumber {
		switch vd.Type.NamedType {
		case "Int":
			i, err := n.Int64()
			if err != nil {
				w.fail("cannot use value %d as %s", i, vd.Type.NamedType)
				return
			}
			v = i
		case "Float":
			f, err := n.Float64()
			if err != nil {
				w.fail("cannot use value %f as %s", f, vd.Type.NamedType)
				return
			}
			v = f
		}
	}
	w.value(vd.Type, v)
}

// value checks v, not nil, as a value of type t.
func (w *varWalk) value(t *ast.Type, v any) {
	if w.n == len(w.frames) {
		return
	}
	if t.Elem != nil {
		w.list(t.Elem, v)
		return
	}
	def := w.schema.Types[t.NamedType]
	if def == nil {
		return // never, after validation; def.Kind would panic
	}
	switch def.Kind {
	case ast.Enum:
		w.enum(def, v)
	case ast.Scalar:
		w.scalar(t.NamedType, v)
	case ast.InputObject:
		w.object(def, v)
	}
}

// list checks v as a list of elem: a single value is a list of one. Values
// coerced by gqlparser may hold typed slices ([]string: a single value it
// made a list).
func (w *varWalk) list(elem *ast.Type, v any) {
	list, isList := v.([]any)
	if !isList {
		if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice {
			for i := range rv.Len() {
				w.element(elem, i, rv.Index(i).Interface())
			}
			return
		}
		w.element(elem, 0, v)
		return
	}
	for i, e := range list {
		w.element(elem, i, e)
	}
}

func (w *varWalk) element(elem *ast.Type, i int, e any) {
	w.push("", i)
	if e == nil {
		if elem.NonNull {
			w.fail("cannot be null")
		}
	} else {
		w.value(elem, e)
	}
	w.pop()
}

func (w *varWalk) enum(def *ast.Definition, v any) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.String:
	default:
		w.fail("enums must be ints or strings")
		return
	}
	s := rv.String() // as gqlparser compares it ("<int64 Value>" for an int)
	for _, ev := range def.EnumValues {
		if strings.EqualFold(s, ev.Name) {
			return
		}
	}
	w.fail("%s is not a valid %s", s, def.Name)
}

// scalar checks the built-in scalars; the service's own (Decimal, Time)
// are parsed by their resolvers' arguments, as gqlparser leaves them.
func (w *varWalk) scalar(name string, v any) {
	rv := reflect.ValueOf(v)
	kind := rv.Kind()
	switch name {
	case "Int":
		switch kind {
		case reflect.Int, reflect.Int32, reflect.Int64:
			return
		case reflect.Float32, reflect.Float64:
			if whole(rv.Float()) {
				return
			}
		case reflect.String:
			if _, err := strconv.ParseInt(rv.String(), 10, 64); err == nil {
				return
			}
		}
	case "Float":
		switch kind {
		case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int32, reflect.Int64:
			return
		case reflect.String:
			if _, err := strconv.ParseFloat(rv.String(), 64); err == nil {
				return
			}
		}
	case "String":
		if kind == reflect.String {
			if _, isNumber := v.(json.Number); isNumber {
				w.fail("must be a string")
			}
			return
		}
	case "Boolean":
		if kind == reflect.Bool {
			return
		}
	case "ID":
		switch kind {
		case reflect.Int, reflect.Int32, reflect.Int64, reflect.String:
			return
		case reflect.Float32, reflect.Float64:
			switch f := rv.Float(); {
			case !whole(f):
			case math.Abs(f) > 1<<53-1:
				w.fail("cannot use %g as ID: integers beyond 2^53-1 may have been rounded; "+
					"decode variables with json.Decoder.UseNumber", f)
				return
			default:
				return
			}
		}
	default:
		return
	}
	w.fail("cannot use %s as %s", kind, name)
}

func whole(f float64) bool { return !math.IsInf(f, 0) && f == math.Trunc(f) }

// object checks an input object: its unknown fields (in name order), then
// each of its type's fields.
func (w *varWalk) object(def *ast.Definition, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		if kind := reflect.ValueOf(v).Kind(); kind != reflect.Map {
			w.fail("must be a %s, not a %s", def.Name, kind)
		}
		return // another map type: gqlparser's coercion judges it
	}
	var unknown []string
	for name := range obj {
		if name != "__typename" && def.Fields.ForName(name) == nil {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		w.push(name, -1)
		w.fail("unknown field")
		w.pop()
	}
	for _, f := range def.Fields {
		fv, present := obj[f.Name]
		w.push(f.Name, -1)
		switch {
		case !present:
			if f.Type.NonNull && !hasDefault(f) {
				w.fail("must be defined")
			}
		case fv == nil:
			if f.Type.NonNull {
				w.fail("cannot be null")
			}
		default:
			w.value(f.Type, fv)
		}
		w.pop()
	}
}

func hasDefault(f *ast.FieldDefinition) bool {
	if f.DefaultValue == nil {
		return false
	}
	_, err := f.DefaultValue.Value(nil)
	return err == nil
}

// variableTypes refuses, after gqlparser's coercion, what variableErrors
// finds that the coercion lets through (a number for a String). Its error
// is the first; listVariableErrors lists them all.
type variableTypes struct{ schema *ast.Schema }

func (variableTypes) ExtensionName() string                   { return "VariableTypes" }
func (variableTypes) Validate(graphql.ExecutableSchema) error { return nil }
func (s variableTypes) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if errs := variableErrors(s.schema, oc.Operation, oc.Variables); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// listVariableErrors is a transport whose executor answers a request
// refused for a variable's value with every bad value of its variables.
// gqlparser's coercion (or variableTypes) still decides whether the request
// is refused: its own error is kept should the walk not find it.
type listVariableErrors struct {
	graphql.Transport
	schema *ast.Schema
}

func (t listVariableErrors) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	t.Transport.Do(w, r, variablesExecutor{GraphExecutor: exec, schema: t.schema})
}

type variablesExecutor struct {
	graphql.GraphExecutor
	schema *ast.Schema
}

func (e variablesExecutor) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	oc, errs := e.GraphExecutor.CreateOperationContext(ctx, params)
	if len(errs) != 1 || !isVariableError(errs[0]) || oc == nil || oc.Operation == nil {
		return oc, errs
	}
	all := variableErrors(e.schema, oc.Operation, params.Variables)
	first := errs[0]
	for _, err := range all {
		if err.Message == first.Message && err.Path.String() == first.Path.String() {
			return oc, all
		}
	}
	return oc, append(gqlerror.List{first}, all...)
}

// isVariableError tells a refusal of a variable's value by its path.
func isVariableError(err *gqlerror.Error) bool {
	if len(err.Path) < 2 {
		return false
	}
	name, ok := err.Path[0].(ast.PathName)
	return ok && name == "variable"
}
