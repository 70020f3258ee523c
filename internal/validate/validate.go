// Package validate holds the field checks that several operations share.
package validate

import (
	"net/mail"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"merchantpay/internal/apperr"
)

var (
	phoneRE = regexp.MustCompile(`^\+?[0-9]{7,15}$`)
)

// Reference checks a merchant-chosen reference: 1 to 100 characters of
// letters, digits and . _ : @ + - (it appears in URL paths and narrations).
func Reference(s string) string {
	ok := len(s) >= 1 && len(s) <= 100 && isAlnum(s[0])
	for i := 1; ok && i < len(s); i++ {
		ok = ReferenceByte(s[i])
	}
	if !ok {
		return "must be 1 to 100 characters of letters, digits and . _ : @ + -, starting with a letter or digit"
	}
	return ""
}

// ReferenceByte reports whether c may appear in a reference (after its
// first character, which is a letter or a digit). A loop, not a regular
// expression: narration scans pieces of texts of megabytes with it.
func ReferenceByte(c byte) bool {
	return isAlnum(c) || c == '_' || c == '-' || c == '.' || c == ':' || c == '@' || c == '+'
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// UUID reports whether s is a UUID in the form the service writes one: 36
// characters, lower-case hexadecimal digits grouped 8-4-4-4-12.
func UUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Email checks an e-mail address.
func Email(s string) string {
	if len(s) > 254 {
		return "must be at most 254 characters"
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || !strings.Contains(s[strings.LastIndex(s, "@")+1:], ".") {
		return "must be a valid e-mail address"
	}
	return ""
}

// Phone checks a phone number: digits with an optional leading +, 7 to 15
// digits (E.164 length), spaces and hyphens ignored.
func Phone(s string) string {
	cleaned := strings.NewReplacer(" ", "", "-", "").Replace(s)
	if !phoneRE.MatchString(cleaned) {
		return "must be a phone number of 7 to 15 digits, optionally starting with +"
	}
	return ""
}

// HTTPURL checks an absolute http(s) URL.
func HTTPURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s) > 2048 {
		return "must be an absolute http or https URL"
	}
	return ""
}

// Text checks free text a merchant sends: valid UTF-8 without NUL
// characters, which PostgreSQL cannot store or even compare (SQLite would
// store them), so both databases answer alike.
func Text(s string) string {
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return "must be valid text without NUL characters"
	}
	return ""
}

// Name checks a person's or business's name.
func Name(s string) string {
	if msg := Text(s); msg != "" {
		return msg
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return "is required"
	}
	if len(t) > 100 {
		return "must be at most 100 characters"
	}
	return ""
}

// QueryProblem is a parameter of a URL's query string that cannot be read:
// Field names it ("query string" when its name cannot be read either).
type QueryProblem struct{ Field, Message string }

// Query reads a URL's raw query string: its parameters, and, where
// url.ParseQuery fails (a bad percent-escape, a ';' between parameters, more
// parameters than it reads), the problems that say why, so a request is
// refused instead of read without the parameters ParseQuery drops. The
// problems are nil when the whole query string reads.
func Query(raw string) (url.Values, []QueryProblem) {
	if raw == "" {
		return nil, nil // most requests: no map to make (reads of nil Values are empty)
	}
	values, err := url.ParseQuery(raw)
	if err == nil {
		return values, nil
	}
	var out []QueryProblem
	// As url.ParseQuery splits and decodes.
	for pair := range strings.SplitSeq(raw, "&") {
		if pair == "" {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		name, keyErr := url.QueryUnescape(key)
		if keyErr != nil || strings.Contains(key, ";") {
			name = "query string"
		}
		switch _, valueErr := url.QueryUnescape(value); {
		case strings.Contains(pair, ";"):
			out = append(out, QueryProblem{name, "must separate parameters with '&', not ';'"})
		case keyErr != nil || valueErr != nil:
			out = append(out, QueryProblem{name, "is not valid URL encoding: write '%' as %25, and a byte as % and two hex digits"})
		}
	}
	if out == nil {
		// Every pair reads: ParseQuery refused the query string as a whole,
		// for having more parameters than it reads (10,000 by default).
		out = append(out, QueryProblem{"query string", "has more parameters than the server reads"})
	}
	return values, out
}

// QueryError is the VALIDATION_ERROR naming each problem's parameter; nil
// when there are none.
func QueryError(problems []QueryProblem) error {
	if len(problems) == 0 {
		return nil
	}
	var f apperr.Fields
	for _, p := range problems {
		f.Add(p.Field, "%s", p.Message)
	}
	return f.Err()
}
