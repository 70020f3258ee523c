// Package scalar holds the GraphQL scalars: Decimal (a string), Time (UTC
// with milliseconds) and Float (never with an exponent).
package scalar

import (
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/shopspring/decimal"

	"merchantpay/internal/apperr"
)

// Decimal is an exact amount, serialised as a string.
type Decimal = decimal.Decimal

// MarshalDecimal writes d as a JSON string.
func MarshalDecimal(d decimal.Decimal) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(d.String()))
	})
}

// UnmarshalDecimal accepts a string (or, leniently, a JSON number literal) holding a decimal.
func UnmarshalDecimal(v any) (decimal.Decimal, error) {
	switch x := v.(type) {
	case string:
		d, err := decimal.NewFromString(x)
		if err != nil {
			return decimal.Decimal{}, invalid("%q is not a decimal number", x)
		}
		return d, nil
	case int64:
		return decimal.NewFromInt(x), nil
	case int:
		return decimal.NewFromInt(int64(x)), nil
	default:
		return decimal.Decimal{}, invalid("a Decimal must be a string such as \"1500.25\"")
	}
}

// invalid is the error of a value a scalar cannot take: the client's
// mistake (VALIDATION_ERROR), not the server's.
func invalid(format string, args ...any) error {
	return apperr.New(apperr.Validation, format, args...)
}

// Time is a timestamp.
type Time = time.Time

// Layout is the one timestamp shape of the service.
const Layout = "2006-01-02T15:04:05.000Z"

// MarshalTime writes t in UTC with milliseconds.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = io.WriteString(w, strconv.Quote(t.UTC().Format(Layout)))
	})
}

// UnmarshalTime accepts RFC 3339.
func UnmarshalTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, invalid("a Time must be an RFC 3339 string")
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, invalid("%q is not an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

// Float is GraphQL's Float. gqlgen's own writes 1795628940634 (an epoch in
// milliseconds, which GraphQL's 32-bit Int cannot hold) as
// 1.795628940634e+12, which strict decoders refuse as an integer; this one
// writes every value in plain decimal notation.
type Float = float64

// MarshalFloat writes f without an exponent.
func MarshalFloat(f float64) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		_, _ = w.Write(strconv.AppendFloat(nil, f, 'f', -1, 64))
	})
}

// UnmarshalFloat reads a Float as gqlgen does, a refusal being the client's
// mistake.
func UnmarshalFloat(v any) (float64, error) {
	f, err := graphql.UnmarshalFloat(v)
	if err != nil {
		return 0, invalid("%s", err.Error())
	}
	return f, nil
}
