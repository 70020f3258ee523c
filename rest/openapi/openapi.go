// Package openapi holds the OpenAPI 3.1 description of the REST API,
// written by hand in openapi.yaml beside the route table it describes, and
// serves it as JSON at /openapi.json. A test in package rest fails when a
// route has no operation here, or an operation no route.
package openapi

import (
	_ "embed"
	"net/http"
	"strconv"
	"sync"
)

//go:embed openapi.yaml
var source []byte

// YAML is the document as written.
func YAML() []byte { return source }

// document converts the YAML once, on first use.
var document = sync.OnceValues(func() ([]byte, error) { return yamlToJSON(source) })

// JSON is the document as JSON, its keys in the order they are written.
func JSON() ([]byte, error) { return document() }

// Path is where the service serves the document.
const Path = "/openapi.json"

// Handler serves the document to GET and HEAD.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		doc, err := JSON()
		if err != nil {
			// The embedded file is broken: every test of the package says so.
			http.Error(w, "the API description is unavailable", http.StatusInternalServerError)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(doc)))
		// Code generators and documentation pages of other origins read it.
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Cache-Control", "no-cache")
		if r.Method == http.MethodGet {
			_, _ = w.Write(doc)
		}
	})
}
