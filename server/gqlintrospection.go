package server

import (
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// fullestIntrospection is graphql-js's getIntrospectionQuery (graphql 16.15)
// with every option on: descriptions, specifiedByUrl,
// directiveIsRepeatable, schemaDescription, inputValueDeprecation and
// oneOf. It asks for the most any standard client's introspection query
// does; its cost sets the bound on introspection (introspectionBound).
const fullestIntrospection = `

query IntrospectionQuery {
  __schema {
    description
    queryType { name kind }
    mutationType { name kind }
    subscriptionType { name kind }
    types {
      ...FullType
    }
    directives {
      name
      description
      isRepeatable
      
      
      locations
      args(includeDeprecated: true) {
        ...InputValue
      }
    }
  }
}

fragment FullType on __Type {
  kind
  name
  description
  specifiedByURL
  isOneOf
  fields(includeDeprecated: true) {
    name
    description
    args(includeDeprecated: true) {
      ...InputValue
    }
    type {
      ...TypeRef
    }
    isDeprecated
    deprecationReason
  }
  inputFields(includeDeprecated: true) {
    ...InputValue
  }
  interfaces {
    ...TypeRef
  }
  enumValues(includeDeprecated: true) {
    name
    description
    isDeprecated
    deprecationReason
  }
  possibleTypes {
    ...TypeRef
  }
}

fragment InputValue on __InputValue {
  name
  description
  type { ...TypeRef }
  defaultValue
  isDeprecated
  deprecationReason
}

fragment TypeRef on __Type {
  kind
  name
  ofType {
    name
    kind
    ofType {
      name
      kind
      ofType {
        name
        kind
        ofType {
          name
          kind
          ofType {
            name
            kind
            ofType {
              name
              kind
              ofType {
                name
                kind
                ofType {
                  name
                  kind
                  ofType {
                    name
                    kind
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}
  
`

// introspectionBound is the most an introspection-only operation may cost
// counted as any other's (see costWalk.FullCost), against schema s: half
// as much again as the fullest standard introspection query, so that
// every client's own passes while two copies of it in one request, or
// deeper recursion through field types, do not. It grows with the schema,
// as the standard query's cost does.
func introspectionBound(c *costWalk, s *ast.Schema) int {
	doc, errs := gqlparser.LoadQuery(s, fullestIntrospection)
	if errs != nil || len(doc.Operations) != 1 {
		panic("the standard introspection query does not validate against the schema: " + errs.Error())
	}
	return c.FullCost(doc.Operations[0], nil) * 3 / 2
}
