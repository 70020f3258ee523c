package validate

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"merchantpay/internal/apperr"
)

// Reference accepts exactly what the rule says (the regular expression it
// replaced, kept here as the rule's statement).
func TestReference(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,99}$`)
	cases := []string{"", "a", "A9", "inv-42", "INV_42.x:y@z+w", "-a", ".a", "_a", "a b", "a/b", "é", "a\x00",
		strings.Repeat("a", 100), strings.Repeat("a", 101), "9" + strings.Repeat("-", 99), "a!", "!a"}
	for c := range 256 {
		cases = append(cases, "a"+string(rune(c)), string([]byte{byte(c)}), "a"+string([]byte{byte(c)}))
	}
	for _, s := range cases {
		if got, want := Reference(s) == "", rule.MatchString(s); got != want {
			t.Errorf("Reference(%q) accepted %v, the rule says %v", s, got, want)
		}
	}
}

func TestQuery(t *testing.T) {
	for raw, want := range map[string]string{
		"":                         "[]",
		"limit=5&cursor=abc%3D%3D": "[]",
		"a=%E2%82%AC&&b=+x":        "[]",
		"cursor=%zz":               "[{cursor is not valid URL encoding: write '%' as %25, and a byte as % and two hex digits}]",
		"limit=1;cursor=x":         "[{limit must separate parameters with '&', not ';'}]",
		"%zz=1&ok=1&c=%":           "[{query string is not valid URL encoding: write '%' as %25, and a byte as % and two hex digits} {c is not valid URL encoding: write '%' as %25, and a byte as % and two hex digits}]",
		// Every pair reads, but there are more than ParseQuery reads.
		strings.Repeat("a=1&", 10001): "[{query string has more parameters than the server reads}]",
	} {
		values, problems := Query(raw)
		if got := fmt.Sprint(problems); got != want {
			t.Errorf("Query(%.40q) = %s, want %s", raw, got, want)
		}
		if problems == nil && values.Encode() != mustParse(t, raw).Encode() {
			t.Errorf("Query(%q) read %v", raw, values)
		}
	}
	if values, _ := Query("cursor=%zz&limit=5"); values.Get("limit") != "5" {
		t.Errorf("the readable parameters of a bad query string: %v", values)
	}
}

func mustParse(t *testing.T, raw string) url.Values {
	t.Helper()
	v, err := url.ParseQuery(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// QueryError names each problem's parameter in one VALIDATION_ERROR.
func TestQueryError(t *testing.T) {
	if err := QueryError(nil); err != nil {
		t.Errorf("no problems: %v", err)
	}
	_, problems := Query("%zz=1&cursor=%g0")
	e := apperr.As(QueryError(problems))
	if e.Kind != apperr.Validation || fmt.Sprint(e.Fields) != "[{query string is not valid URL encoding: write '%' as %25, and a byte as % and two hex digits} {cursor is not valid URL encoding: write '%' as %25, and a byte as % and two hex digits}]" {
		t.Errorf("QueryError = %s %v", e.Kind, e.Fields)
	}
}
