package openapi

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestYAMLToJSONKeepsOrderAndNumbers(t *testing.T) {
	got, err := yamlToJSON([]byte(`
zeta: 1
alpha:
  amount: 25000.50
  tiny: 0.000000001
  big: 123456789012345678901234567890
  code: '058'
  none: null
  yes: true
  list: [b, a]
  ref: &r {x: 1}
  again: *r
`))
	if err != nil {
		t.Fatal(err)
	}
	var compact strings.Builder
	for _, line := range strings.Split(string(got), "\n") {
		compact.WriteString(strings.TrimSpace(line))
	}
	want := `{"zeta": 1,"alpha": {"amount": 25000.50,"tiny": 0.000000001,"big": 123456789012345678901234567890,` +
		`"code": "058","none": null,"yes": true,"list": ["b","a"],"ref": {"x": 1},"again": {"x": 1}}}`
	if compact.String() != want {
		t.Errorf("got  %s\nwant %s", compact.String(), want)
	}
	if !json.Valid(got) {
		t.Errorf("not JSON: %s", got)
	}
}

func TestYAMLToJSONRefuses(t *testing.T) {
	for name, src := range map[string]string{
		"a key twice":         "a: 1\na: 2\n",
		"a number JSON lacks": "a: 0x1F\n",
		"a non-string key":    "? [a]\n: 1\n",
		"a timestamp":         "a: !!timestamp 2026-11-21\n",
		"not YAML":            "a: [\n",
	} {
		if out, err := yamlToJSON([]byte(src)); err == nil {
			t.Errorf("%s: converted to %s", name, out)
		}
	}
}

// The embedded document converts, and is an OpenAPI 3.1 document.
func TestEmbeddedDocumentConverts(t *testing.T) {
	raw, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ OpenAPI string }
	if err := json.Unmarshal(raw, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Fatalf("openapi %q, %v", doc.OpenAPI, err)
	}
}
