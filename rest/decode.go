package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/shopspring/decimal"

	"merchantpay/internal/apperr"
	"merchantpay/internal/money"
)

// object is a JSON object being decoded field by field, so that every bad
// field is reported at once with its full path and nothing goes through
// float64.
type object struct {
	m    map[string]json.RawMessage
	path string
	f    *apperr.Fields
}

// parseBody decodes a request body that must be one JSON object.
func parseBody(body []byte, f *apperr.Fields) (object, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return object{}, apperr.New(apperr.BadRequest, "the request body must be a JSON object")
	}
	if trimmed[0] != '{' {
		return object{}, apperr.New(apperr.BadRequest, "the request body must be a JSON object")
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&m); err != nil {
		return object{}, apperr.New(apperr.BadRequest, "the request body is not valid JSON: %s", jsonErr(err))
	}
	// Nothing but white space may follow the object. (Decoder.More
	// reports false before a stray ']' or '}', so it cannot tell.)
	if len(bytes.TrimSpace(trimmed[dec.InputOffset():])) > 0 {
		return object{}, apperr.New(apperr.BadRequest, "the request body must hold exactly one JSON object")
	}
	return object{m: m, f: f}, nil
}

func jsonErr(err error) string {
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	}
	return "malformed JSON"
}

func (o object) name(field string) string {
	if o.path == "" {
		return field
	}
	return o.path + "." + field
}

// raw returns the field's JSON, or nil when it is absent or null.
func (o object) raw(field string) json.RawMessage {
	v, ok := o.m[field]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return nil
	}
	return v
}

// present reports whether the field is there and not null.
func (o object) present(field string) bool { return o.raw(field) != nil }

// str returns a string field; required adds "is required" when absent.
func (o object) str(field string, required bool) *string {
	v := o.raw(field)
	if v == nil {
		if required {
			o.f.Add(o.name(field), "is required")
		}
		return nil
	}
	var s string
	if v[0] != '"' || json.Unmarshal(v, &s) != nil {
		o.f.Add(o.name(field), "must be a string")
		return nil
	}
	return &s
}

// obj returns a nested object; ok false when absent or of another type.
func (o object) obj(field string, required bool) (object, bool) {
	v := o.raw(field)
	if v == nil {
		if required {
			o.f.Add(o.name(field), "is required")
		}
		return object{}, false
	}
	var m map[string]json.RawMessage
	if v[0] != '{' || json.Unmarshal(v, &m) != nil {
		o.f.Add(o.name(field), "must be an object")
		return object{}, false
	}
	return object{m: m, path: o.name(field), f: o.f}, true
}

// arr returns the elements of an array field.
func (o object) arr(field string, required bool) ([]json.RawMessage, bool) {
	v := o.raw(field)
	if v == nil {
		if required {
			o.f.Add(o.name(field), "is required")
		}
		return nil, false
	}
	var a []json.RawMessage
	if v[0] != '[' || json.Unmarshal(v, &a) != nil {
		o.f.Add(o.name(field), "must be an array")
		return nil, false
	}
	return a, true
}

// element makes an array element an object.
func (o object) element(field string, i int, v json.RawMessage) (object, bool) {
	p := fmt.Sprintf("%s[%d]", o.name(field), i)
	var m map[string]json.RawMessage
	if len(v) == 0 || v[0] != '{' || json.Unmarshal(v, &m) != nil {
		o.f.Add(p, "must be an object")
		return object{}, false
	}
	return object{m: m, path: p, f: o.f}, true
}

// number returns a JSON number field exactly.
func (o object) number(field string, required bool) *decimal.Decimal {
	v := o.raw(field)
	if v == nil {
		if required {
			o.f.Add(o.name(field), "is required")
		}
		return nil
	}
	d, err := money.ParseJSONNumber(v)
	if err != nil {
		o.f.Add(o.name(field), "must be a number")
		return nil
	}
	return &d
}

// integer returns a whole JSON number field.
func (o object) integer(field string, required bool) *int64 {
	d := o.number(field, required)
	if d == nil {
		return nil
	}
	if !d.IsInteger() || d.Abs().GreaterThan(decimal.NewFromInt(1<<53)) {
		o.f.Add(o.name(field), "must be a whole number")
		return nil
	}
	n := d.IntPart()
	return &n
}

// boolean returns a JSON boolean field.
func (o object) boolean(field string) *bool {
	v := o.raw(field)
	if v == nil {
		return nil
	}
	b, err := strconv.ParseBool(string(v))
	if err != nil || (string(v) != "true" && string(v) != "false") {
		o.f.Add(o.name(field), "must be true or false")
		return nil
	}
	return &b
}
