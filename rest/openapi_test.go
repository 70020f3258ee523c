package rest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"merchantpay/rest/openapi"
)

// TestOpenAPICoversRoutes fails when a route of the table has no operation in
// the OpenAPI document, or the document describes a path or method the table
// lacks: the document is written beside the table and kept with it.
func TestOpenAPICoversRoutes(t *testing.T) {
	raw, err := openapi.JSON()
	if err != nil {
		t.Fatalf("the document does not convert to JSON: %v", err)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Errorf("openapi %q, want 3.1.x", doc.OpenAPI)
	}
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodHead, http.MethodOptions, http.MethodTrace}
	described := map[string]bool{}
	for path, item := range doc.Paths {
		for m, rawOp := range item {
			if !slices.Contains(methods, strings.ToUpper(m)) {
				continue // parameters, summary...
			}
			described[strings.ToUpper(m)+" "+path] = true
			var op struct {
				OperationID string `json:"operationId"`
			}
			if err := json.Unmarshal(rawOp, &op); err != nil || op.OperationID == "" {
				t.Errorf("%s %s has no operationId", strings.ToUpper(m), path)
			}
		}
	}
	routed := map[string]bool{}
	for _, r := range (&Ops{}).routes() {
		key := r.Method + " " + r.Pattern
		routed[key] = true
		if !described[key] {
			t.Errorf("route %s has no operation in rest/openapi/openapi.yaml", key)
		}
	}
	for key := range described {
		if !routed[key] {
			t.Errorf("rest/openapi/openapi.yaml describes %s, which the route table lacks", key)
		}
	}
}
