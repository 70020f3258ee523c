package money

import (
	"encoding/json"
	"errors"

	"github.com/shopspring/decimal"
)

// ErrNotNumber is returned by ParseJSONNumber for anything but a JSON number
// token: a string, null, a boolean, an object, or malformed number text.
var ErrNotNumber = errors.New("must be a number")

// ErrNumberRange is returned by ParseJSONNumber for a well-formed number whose
// text is absurd for an amount (too long, or exponent beyond ±MaxJSONExponent).
var ErrNumberRange = errors.New("number is out of range")

const (
	// MaxJSONExponent bounds the exponent written in a JSON number (1e30 is
	// accepted, 1e31 is not): no amount needs more, and a huge exponent would
	// otherwise make the decimal library build a huge integer.
	MaxJSONExponent = 30
	// maxJSONNumberLen bounds the text of one number. A real amount needs at
	// most about 20 characters; 100 leaves room for trailing zeros.
	maxJSONNumberLen = 100
)

// ParseJSONNumber parses one raw JSON value that must be a number token, and
// returns its exact value. The raw text goes straight to decimal.NewFromString
// (never through float64), after a strict check of the JSON number grammar
//
//	-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
//
// because NewFromString alone is laxer than JSON (it takes "+1", ".5", "01",
// "1.", a Unicode minus). Surrounding JSON whitespace is ignored.
func ParseJSONNumber(raw json.RawMessage) (decimal.Decimal, error) {
	s := trimJSONSpace(string(raw))
	if len(s) > maxJSONNumberLen {
		if isNumberStart(s) {
			return decimal.Decimal{}, ErrNumberRange
		}
		return decimal.Decimal{}, ErrNotNumber
	}
	exp, ok := scanJSONNumber(s)
	if !ok {
		return decimal.Decimal{}, ErrNotNumber
	}
	if exp > MaxJSONExponent || exp < -MaxJSONExponent {
		return decimal.Decimal{}, ErrNumberRange
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		// Unreachable after the grammar check; kept so a library change
		// cannot turn into a silently wrong value.
		return decimal.Decimal{}, ErrNotNumber
	}
	return d, nil
}

func trimJSONSpace(s string) string {
	isSpace := func(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }
	for len(s) > 0 && isSpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isSpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

func isNumberStart(s string) bool {
	return s != "" && (s[0] == '-' || isDigit(s[0]))
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// scanJSONNumber reports whether s is exactly one JSON number and returns its
// written exponent (0 if none), saturated far beyond MaxJSONExponent so that
// an exponent with many digits cannot overflow.
func scanJSONNumber(s string) (exp int, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && isDigit(s[i]):
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return 0, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			if exp <= 1_000_000 {
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if i == start {
			return 0, false
		}
		if neg {
			exp = -exp
		}
	}
	return exp, i == len(s)
}
