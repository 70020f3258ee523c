package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"merchantpay/server/servertest"
)

// What an auditor sent to multiply validation's work and errors: each
// copy of an unknown directive, an unused variable, an unknown argument or
// a repeated directive is checked, and refused, on its own. Small copies of
// them (a few KB) are refused before validation with one error.
func annotationFloods(n int) map[string]string {
	vars := make([]string, n)
	args := make([]string, n)
	for i := range n {
		vars[i] = fmt.Sprintf("$v%d: Int", i)
		args[i] = fmt.Sprintf("x%d: 1", i)
	}
	return map[string]string{
		"unknown directives":   "{ me { id" + strings.Repeat(" @a", n) + " } }",
		"unused variables":     "query(" + strings.Join(vars, ", ") + ") { me { id } }",
		"unknown arguments":    "{ me(" + strings.Join(args, ", ") + ") { id } }",
		"repeated @include":    "{ me { id" + strings.Repeat(" @include(if: true)", n) + " } }",
		"a long list argument": `{ banks(country: NG, x: [` + strings.Repeat("1 ", n) + `]) { name } }`,
	}
}

// unknownFields is a query of n fields the schema does not have: within
// the document's size limits, and n errors of validation.
func unknownFields(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " nope%d", i)
	}
	return b.String() + " }"
}

// A document that multiplies validation's errors is refused before
// validation, in one short answer; a document within the limits that
// still fails validation many times over lists its first 100 errors and
// one that says validation stopped there (it does not go on).
func TestGraphQLErrorAnswersAreBounded(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		for name, q := range annotationFloods(5000) {
			start := time.Now()
			r := e.GQL(m.TestSecret, q, nil, "Accept", acceptGraphQL)
			errs, _ := r.JSON["errors"].([]any)
			if r.Status != 400 || r.Code() != "VALIDATION_ERROR" || len(errs) != 1 || len(r.Body) > 1000 ||
				!strings.Contains(string(r.Body), "directives, arguments, variable definitions") || time.Since(start) > 5*time.Second {
				t.Errorf("%s: %d after %s, %d bytes: %.300s", name, r.Status, time.Since(start), len(r.Body), r.Body)
			}
		}
		r := e.GQL(m.TestSecret, unknownFields(1000), nil, "Accept", acceptGraphQL)
		errs, _ := r.JSON["errors"].([]any)
		if r.Status != 400 || len(errs) != 101 {
			t.Fatalf("1000 unknown fields: %d with %d errors: %.300s", r.Status, len(errs), r.Body)
		}
		last, _ := errs[100].(map[string]any)
		ext, _ := last["extensions"].(map[string]any)
		if ext["code"] != "VALIDATION_ERROR" || !strings.Contains(fmt.Sprint(last["message"]), "validation stopped after 100 errors") {
			t.Errorf("the last error: %v", last)
		}
		// A big document within the limits still validates and runs.
		r = e.GQL(m.TestSecret, "query($a: Boolean = true) {"+aliasedMe(400)+" }", nil)
		if r.GQLData()["m399"] == nil {
			t.Errorf("400 selections with a directive each: %.300s", r.Body)
		}
	})
}

// An answer is within GRAPHQL_MAX_RESPONSE_BYTES whatever it holds: a
// 6 KB document whose errors would take far more is answered
// RESPONSE_TOO_LARGE, over HTTP (in both media types) and over WebSocket
// (both protocols).
func TestGraphQLErrorAnswersWithinTheSizeCap(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		q := unknownFields(800)
		if len(q) < 5000 || len(q) > 7000 {
			t.Fatalf("the document is %d bytes", len(q))
		}
		for _, accept := range []string{acceptGraphQL, acceptJSON} {
			r := e.GQL(m.TestSecret, q, nil, "Accept", accept)
			status := 400
			if accept == acceptJSON {
				status = 200
			}
			if r.Status != status || r.Code() != "RESPONSE_TOO_LARGE" || len(r.Body) > 3000 {
				t.Errorf("%s: %d, %d bytes: %.300s", accept, r.Status, len(r.Body), r.Body)
			}
		}
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			for name, q := range map[string]string{"unknown fields": q, "unknown directives": annotationFloods(5000)["unknown directives"]} {
				sub := subscribeWS(t, e, proto, m.TestSecret, q, nil)
				typ, payload := readMessage(t, sub.c)
				var errs []struct {
					Extensions map[string]any `json:"extensions"`
				}
				_ = json.Unmarshal(payload, &errs)
				want := "RESPONSE_TOO_LARGE"
				if name == "unknown directives" {
					want = "VALIDATION_ERROR"
				}
				if typ != "error" || len(errs) != 1 || errs[0].Extensions["code"] != want || len(payload) > 3000 {
					t.Errorf("%s %s: %s, %d bytes: %.300s", proto, name, typ, len(payload), payload)
				}
			}
		}
	}, servertest.With("GRAPHQL_MAX_RESPONSE_BYTES", "3000"))
}

// A subscription refused by its limits (here its cost) never ran: over
// graphql-transport-ws it gets an error message and no complete, over
// graphql-ws an error then complete, as one that fails validation does.
func TestWebSocketLimitRefusalIsAnError(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		deliveries := "deliveries { id url status attempts { number statusCode error } }"
		q := "subscription { events { id"
		for i := range 10 {
			q += fmt.Sprintf(" a%d: %s", i, deliveries)
		}
		q += " } }"
		for _, proto := range []string{"graphql-transport-ws", "graphql-ws"} {
			sub := subscribeWS(t, e, proto, m.TestSecret, q, nil)
			typ, payload := readMessage(t, sub.c)
			var errs []struct {
				Extensions map[string]any `json:"extensions"`
			}
			if typ != "error" || json.Unmarshal(payload, &errs) != nil || len(errs) != 1 || errs[0].Extensions["code"] != "QUERY_TOO_COMPLEX" {
				t.Errorf("%s: %s %.300s, want an error message QUERY_TOO_COMPLEX", proto, typ, payload)
				continue
			}
			if proto == "graphql-ws" {
				if typ, _ := readMessage(t, sub.c); typ != "complete" {
					t.Errorf("%s: then %s, want complete", proto, typ)
				}
				continue
			}
			if err := sub.c.WriteJSON(map[string]any{"type": "ping"}); err != nil {
				t.Fatal(err)
			}
			if typ, _ := readMessage(t, sub.c); typ != "pong" {
				t.Errorf("%s: then %s, want pong (no complete after error)", proto, typ)
			}
		}
	})
}

// A document of several operations without operationName is refused
// saying that operationName must name one, with the status of any
// document that fails validation.
func TestGraphQLSeveralOperationsNeedAName(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		q := "query A { me { id } } query B { me { name } }"
		r := e.GQL(m.TestSecret, q, nil, "Accept", acceptGraphQL)
		expectAnswer(t, "two operations", r, 400, acceptGraphQL, "VALIDATION_ERROR", false)
		if msg := string(r.Body); !strings.Contains(msg, "several operations") || !strings.Contains(msg, "operationName") || !strings.Contains(msg, "(A, B)") {
			t.Errorf("two operations: %s", r.Body)
		}
		r = e.Do("POST", "/graphql", m.TestSecret, map[string]any{"query": q, "operationName": "C"}, "Accept", acceptJSON)
		expectAnswer(t, "an unknown operationName", r, 200, acceptJSON, "VALIDATION_ERROR", true)
		if !strings.Contains(string(r.Body), "no operation named C (A, B)") {
			t.Errorf("an unknown operationName: %s", r.Body)
		}
		r = e.Do("POST", "/graphql", m.TestSecret, map[string]any{"query": "query A { me { id } }", "operationName": "C"})
		if r.Code() != "VALIDATION_ERROR" || !strings.Contains(string(r.Body), "no operation named C (A)") {
			t.Errorf("an unknown operationName, one operation: %s", r.Body)
		}
		r = e.Do("POST", "/graphql", m.TestSecret, map[string]any{"query": q, "operationName": "B"})
		if r.GQLData()["me"].(map[string]any)["name"] != "Acme" {
			t.Errorf("operationName B: %s", r.Body)
		}
	})
}

// graphqlJSIntrospection is graphql-js 16.15's getIntrospectionQuery with
// every option on (descriptions, specifiedByUrl, directiveIsRepeatable,
// schemaDescription, inputValueDeprecation, oneOf), as printed by it.
const graphqlJSIntrospection = `

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

// Every standard introspection query passes, the fullest one graphql-js
// writes included, while asking for its types twice over in one request
// is still refused.
func TestGraphQLStandardIntrospectionPasses(t *testing.T) {
	servertest.Each(t, func(t *testing.T, e *servertest.Env) {
		m := e.Merchant("Acme")
		r := e.GQL(m.TestSecret, graphqlJSIntrospection, nil)
		types, _ := r.GQLData()["__schema"].(map[string]any)["types"].([]any)
		if len(types) < 50 {
			t.Fatalf("graphql-js's introspection query: %.300s", r.Body)
		}
		twice := strings.Replace(graphqlJSIntrospection, "types {", "a: types { ...FullType } b: types {", 1)
		if r := e.GQL(m.TestSecret, twice, nil); r.Code() != "QUERY_TOO_COMPLEX" {
			t.Errorf("its types twice over: %.300s", r.Body)
		}
	})
}

// aliasedMe is n selections of me, each under its own alias, with a
// directive each.
func aliasedMe(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, " m%d: me { id @include(if: $a) }", i)
	}
	return b.String()
}
