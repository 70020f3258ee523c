package server

import (
	"context"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// stringVariables refuses a number where a variable's type asks for a
// String, anywhere in it (an input object's field, a list's element).
// Variables are decoded keeping numbers exact (json.Number, a string to
// gqlparser's type check), so without this rule {"reference": 5} would
// reach the operation as "5", where REST refuses the same body as a wrong
// type. The refusal names the field as REST does.
type stringVariables struct{ schema *ast.Schema }

func newStringVariables(schema *ast.Schema) stringVariables { return stringVariables{schema: schema} }

func (stringVariables) ExtensionName() string                   { return "StringVariables" }
func (stringVariables) Validate(graphql.ExecutableSchema) error { return nil }
func (s stringVariables) MutateOperationContext(_ context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil {
		return nil
	}
	for _, vd := range oc.Operation.VariableDefinitions {
		if v, ok := oc.Variables[vd.Variable]; ok {
			if err := s.check(vd.Type, v, ast.Path{ast.PathName("variable"), ast.PathName(vd.Variable)}, 0); err != nil {
				return err
			}
		}
	}
	return nil
}

// check walks v as a value of type t; path is where v is.
func (s stringVariables) check(t *ast.Type, v any, path ast.Path, level int) *gqlerror.Error {
	if v == nil || t == nil || level > 64 {
		return nil
	}
	at := func(el ast.PathElement) ast.Path {
		return append(append(ast.Path{}, path...), el)
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			return s.check(t.Elem, v, path, level+1)
		}
		for i, e := range list {
			if err := s.check(t.Elem, e, at(ast.PathIndex(i)), level+1); err != nil {
				return err
			}
		}
		return nil
	}
	if t.NamedType == "String" {
		if _, isNumber := v.(json.Number); isNumber {
			return invalid(gqlerror.ErrorPathf(path, "must be a string"))
		}
		return nil
	}
	def := s.schema.Types[t.NamedType]
	obj, ok := v.(map[string]any)
	if def == nil || def.Kind != ast.InputObject || !ok {
		return nil
	}
	for _, f := range def.Fields {
		if err := s.check(f.Type, obj[f.Name], at(ast.PathName(f.Name)), level+1); err != nil {
			return err
		}
	}
	return nil
}
