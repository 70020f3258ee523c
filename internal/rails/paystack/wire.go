package paystack

import (
	"bytes"
	"errors"
	"strconv"
	"time"
)

// kobo is an amount in subunits as Paystack writes it: a JSON integer.
// A fraction, an exponent, a string or an overflow does not parse, so no
// amount is ever rounded on the way in.
type kobo int64

func (k *kobo) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		return errors.New("paystack: amount is null")
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return errors.New("paystack: amount is not an integer number of subunits")
	}
	*k = kobo(n)
	return nil
}

// objectID is Paystack's numeric id of an object; it is kept as text so
// that any size survives, and it also accepts a string.
type objectID string

func (o *objectID) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*o = ""
		return nil
	}
	if len(b) > 1 && b[0] == '"' {
		s, err := strconv.Unquote(string(b))
		if err != nil {
			return err
		}
		*o = objectID(s)
		return nil
	}
	if _, err := strconv.ParseUint(string(b), 10, 64); err != nil {
		return errors.New("paystack: id is not a whole number")
	}
	*o = objectID(b)
	return nil
}

// parseTime reads Paystack's ISO 8601 times; the first of ts that parses
// wins, and none gives the zero time.
func parseTime(ts ...string) time.Time {
	for _, s := range ts {
		if s == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
