// Package jsonx renders the service's JSON primitives: exact decimal numbers
// (never through float64) and timestamps in UTC with milliseconds. REST,
// GraphQL, webhook bodies, e-mails and the CLI print them alike.
package jsonx

import (
	"time"

	"github.com/shopspring/decimal"
)

// Num renders a decimal as a JSON number with its exact digits.
type Num decimal.Decimal

// MarshalJSON writes the decimal's exact digits.
func (n Num) MarshalJSON() ([]byte, error) { return []byte(decimal.Decimal(n).String()), nil }

// NumPtr renders nil as null.
func NumPtr(d *decimal.Decimal) *Num {
	if d == nil {
		return nil
	}
	n := Num(*d)
	return &n
}

// TimeLayout is the service's one timestamp shape: UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Time renders t in TimeLayout.
func Time(t time.Time) string { return t.UTC().Format(TimeLayout) }

// TimePtr renders nil as null.
func TimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := Time(*t)
	return &s
}

// UnmarshalJSON reads a JSON number exactly.
func (n *Num) UnmarshalJSON(b []byte) error {
	var d decimal.Decimal
	if err := d.UnmarshalJSON(b); err != nil {
		return err
	}
	*n = Num(d)
	return nil
}

// ParseTime reads a timestamp written by Time.
func ParseTime(s string) (time.Time, error) { return time.Parse(TimeLayout, s) }
