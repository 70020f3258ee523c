package rest

import (
	"strings"
	"testing"
	"unicode/utf8"

	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
)

// FuzzDecodeBankTransfer feeds arbitrary bodies to the decoder of POST
// /sandbox/deposits/bank-transfer: it never panics, fails only with
// BAD_REQUEST or a VALIDATION_ERROR naming known fields, and whatever it
// accepts is a transfer the operation can book. The seeds run as an ordinary
// test.
func FuzzDecodeBankTransfer(f *testing.F) {
	for _, s := range []string{
		`{"account_number": "0123456789", "amount": 100}`,
		`{"account_number": "0123456789", "amount": 1500.50, "narration": "pay !!ORD-1!!", "sender_name": "JOHN DOE", "sender_bank": "GTBank"}`,
		`{"account_number": "0123456789", "amount": "100"}`,
		`{"account_number": "0123456789", "amount": 1e-2}`,
		`{"account_number": "0123456789", "amount": 10000000000.001}`,
		`{"account_number": "0123456789", "amount": -0}`,
		`{"account_number": null, "amount": null, "narration": null}`,
		`{"account_number": 123, "amount": [], "narration": {}, "sender_name": true, "sender_bank": 1}`,
		`{"account_number": "0123456789", "amount": 1, "narration": "\u0000"}`,
		`{"account_number": "0123456789", "amount": 1, "narration": "\ud800"}`,
		`{"amount": 1, "amount": "x"}`,
		`{}`, `[]`, `null`, `"x"`, ``, `{`, `{} {}`, `{"a":1}x`,
	} {
		f.Add([]byte(s))
	}
	known := map[string]bool{"account_number": true, "amount": true, "narration": true, "sender_name": true, "sender_bank": true}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := decodeBankTransfer(body)
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
		if in.AccountNumber == nil || len(*in.AccountNumber) != 10 || strings.Trim(*in.AccountNumber, "0123456789") != "" {
			t.Fatalf("accepted account_number %v", in.AccountNumber)
		}
		if in.Amount == nil || money.ValidateAmount(*in.Amount, money.NGN) != "" {
			t.Fatalf("accepted amount %v", in.Amount)
		}
		if _, err := money.ToMinor(*in.Amount, money.NGN); err != nil {
			t.Fatalf("accepted amount %s: %v", in.Amount, err)
		}
		for _, s := range []*string{in.Narration, in.SenderName, in.SenderBank} {
			if s != nil && (!utf8.ValidString(*s) || strings.ContainsRune(*s, 0)) {
				t.Fatalf("accepted text %q", *s)
			}
		}
	})
}
