package server_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
)

// How the parity test writes one input for both transports and compares
// their answers.
// paritySnake writes a GraphQL name as REST does: accountName → account_name.
func paritySnake(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// parityCamel writes a REST name as GraphQL does: beneficiary.account_name →
// beneficiary.accountName.
func parityCamel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// parityEnums are the input fields GraphQL types as enums whose values
// REST takes in lower case (reject_amount_criteria it takes as GraphQL
// writes it).
var parityEnums = map[string]bool{"accountType": true, "transactionType": true,
	"feeBearer": true, "outcome": true}

// parityDecimals are the fields GraphQL types as Decimal strings: REST
// takes JSON numbers.
var parityDecimals = map[string]bool{"amount": true, "fromAmount": true, "toAmount": true}

// parityToREST writes a GraphQL input as REST's body: snake_case names, enums in
// lower case, decimals as numbers (a value that is no number stays a
// string, the same wrong input).
func parityToREST(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			switch s, isStr := val.(string); {
			case isStr && parityEnums[k]:
				val = strings.ToLower(s)
			case isStr && parityDecimals[k]:
				if _, err := decimal.NewFromString(s); err == nil {
					val = json.Number(s)
				}
			}
			out[paritySnake(k)] = parityToREST(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = parityToREST(val)
		}
		return out
	}
	return v
}

// parityCamelKeys renames a REST answer's keys as GraphQL names them.
func parityCamelKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[parityCamel(k)] = parityCamelKeys(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = parityCamelKeys(val)
		}
		return out
	}
	return v
}

// parityNorm writes a value so that the transports' encodings compare equal:
// numbers and Decimal strings by value, enums without regard to case.
func parityNorm(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case json.Number:
		return parityNormScalar(string(x))
	case string:
		return parityNormScalar(x)
	case bool:
		return fmt.Sprint(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = parityNorm(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = parityCamel(k) + ":" + parityNorm(x[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprint(v)
}

func parityNormScalar(s string) string {
	if d, err := decimal.NewFromString(s); err == nil {
		return d.String()
	}
	return strings.ToLower(s)
}

// parityPick follows a dotted path.
func parityPick(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// parityCompare fails where the compared paths of the two results differ.
func parityCompare(t *testing.T, paths []string, restV, gqlV any) {
	t.Helper()
	rl, rIsList := restV.([]any)
	gl, gIsList := gqlV.([]any)
	if rIsList || gIsList {
		if len(rl) != len(gl) || len(rl) == 0 {
			t.Errorf("REST answered %d items, GraphQL %d (an empty list compares nothing)", len(rl), len(gl))
			return
		}
		for i := range rl {
			parityCompare(t, paths, rl[i], gl[i])
		}
		return
	}
	for _, path := range paths {
		rv, gv := parityPick(restV, path), parityPick(gqlV, path)
		if !parityHasPath(restV, path) || !parityHasPath(gqlV, path) {
			// A path one answer lacks is a mistake of the table (or a
			// field one transport dropped).
			t.Errorf("%s: REST has it %v, GraphQL %v", path, parityHasPath(restV, path), parityHasPath(gqlV, path))
			continue
		}
		if parityNorm(rv) != parityNorm(gv) {
			t.Errorf("%s: REST %s, GraphQL %s", path, parityNorm(rv), parityNorm(gv))
		}
	}
}

func parityHasPath(v any, path string) bool {
	keys := strings.Split(path, ".")
	for i, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
		if i == len(keys)-1 {
			return true
		}
	}
	return true
}

func parityNum(s string) json.Number { return json.Number(s) }

func parityString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}
