package validate

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
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
		"%zz=1&ok=1&c=%":           "[{query is not valid URL encoding: write '%' as %25, and a byte as % and two hex digits} {c is not valid URL encoding: write '%' as %25, and a byte as % and two hex digits}]",
	} {
		if got := fmt.Sprint(Query(raw)); got != want {
			t.Errorf("Query(%q) = %s, want %s", raw, got, want)
		}
	}
}
