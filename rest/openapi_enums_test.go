package rest

import (
	"encoding/json"
	"slices"
	"testing"

	"merchantpay/internal/money"
	"merchantpay/internal/transactions"
	"merchantpay/rest/openapi"
)

// The document's enums of GET /transactions's filters are exactly the
// values the service takes, so a client built from it sends no value the
// service refuses and misses none it takes.
func TestOpenAPITransactionFilterEnums(t *testing.T) {
	raw, err := openapi.JSON()
	if err != nil {
		t.Fatal(err)
	}
	type schema struct {
		Enum []string `json:"enum"`
		Ref  string   `json:"$ref"`
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]schema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var op struct {
		Parameters []struct {
			Name   string `json:"name"`
			In     string `json:"in"`
			Schema schema `json:"schema"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(doc.Paths["/transactions"]["get"], &op); err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, c := range money.All() {
		codes = append(codes, string(c))
	}
	want := map[string][]string{"type": transactions.Types, "status": transactions.Statuses, "currency": codes}
	got := map[string][]string{}
	for _, p := range op.Parameters {
		if p.In != "query" {
			continue
		}
		s := p.Schema
		if s.Ref == "#/components/schemas/Currency" {
			s = doc.Components.Schemas["Currency"]
		}
		got[p.Name] = s.Enum
	}
	for name, values := range want {
		if !slices.Equal(got[name], values) {
			t.Errorf("GET /transactions %s: the document's enum %v, the service takes %v", name, got[name], values)
		}
	}
}
