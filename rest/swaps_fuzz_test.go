package rest

import (
	"strings"
	"testing"
	"unicode/utf8"

	"merchantpay/internal/apperr"
	"merchantpay/internal/validate"
)

// FuzzDecodeSwap feeds arbitrary bodies to the decoder of POST
// /transactions/swap: it never panics, fails only with BAD_REQUEST or a
// VALIDATION_ERROR naming known fields once each, and whatever it accepts
// the swap operation can look up. The seeds run as an ordinary test.
func FuzzDecodeSwap(f *testing.F) {
	for _, s := range []string{
		`{"rate_reference": "8d7c7f4e-5b1a-4a57-9a4e-3f0e2b7c1d00"}`,
		`{"rate_reference": "8d7c7f4e-5b1a-4a57-9a4e-3f0e2b7c1d00", "reference": "order-1"}`,
		`{"rate_reference": "x", "reference": null}`,
		`{"rate_reference": "", "reference": ""}`,
		`{"rate_reference": 1, "reference": 2}`,
		`{"rate_reference": "a\u0000b"}`,
		`{"rate_reference": "\ud800"}`,
		`{"rate_reference": "x", "reference": "has space"}`,
		`{"rate_reference": "x", "rate_reference": 5}`,
		`{}`, `[]`, `null`, `"x"`, ``, `{`, `{} {}`,
	} {
		f.Add([]byte(s))
	}
	known := map[string]bool{"rate_reference": true, "reference": true}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := decodeSwap(body)
		if err != nil {
			e := apperr.As(err)
			switch e.Kind {
			case apperr.BadRequest:
			case apperr.Validation:
				if len(e.Fields) == 0 {
					t.Fatalf("validation error without fields: %v", err)
				}
				seen := map[string]bool{}
				for _, fe := range e.Fields {
					if !known[fe.Field] || seen[fe.Field] {
						t.Fatalf("field %q (unknown or repeated) in %v", fe.Field, e.Fields)
					}
					seen[fe.Field] = true
				}
			default:
				t.Fatalf("error kind %s: %v", e.Kind, err)
			}
			return
		}
		if in.RateReference == nil || strings.TrimSpace(*in.RateReference) == "" ||
			!utf8.ValidString(*in.RateReference) || strings.ContainsRune(*in.RateReference, 0) {
			t.Fatalf("accepted rate_reference %v", in.RateReference)
		}
		if in.Reference != nil && validate.Reference(*in.Reference) != "" {
			t.Fatalf("accepted reference %q", *in.Reference)
		}
	})
}
