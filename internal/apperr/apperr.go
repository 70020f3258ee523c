// Package apperr holds the service's error kinds and the one table that maps
// each kind to an HTTP status and a GraphQL extensions.code. Code matches on
// kinds, never on message text.
package apperr

import (
	"errors"
	"fmt"
	"net/http"
)

// Kind is a stable, machine-readable error code.
type Kind string

const (
	BadRequest           Kind = "BAD_REQUEST"
	Validation           Kind = "VALIDATION_ERROR"
	Unauthorized         Kind = "UNAUTHORIZED"
	Forbidden            Kind = "FORBIDDEN"
	LiveModeOnly         Kind = "LIVE_MODE_ONLY"
	NotEnrolled          Kind = "NOT_ENROLLED"
	NotFound             Kind = "NOT_FOUND"
	MethodNotAllowed     Kind = "METHOD_NOT_ALLOWED"
	DuplicateReference   Kind = "DUPLICATE_REFERENCE"
	RateExpired          Kind = "RATE_EXPIRED"
	RateUsed             Kind = "RATE_USED"
	IdempotencyKeyReused Kind = "IDEMPOTENCY_KEY_REUSED"
	IdempotencyKeyInUse  Kind = "IDEMPOTENCY_KEY_IN_USE"
	PayloadTooLarge      Kind = "PAYLOAD_TOO_LARGE"
	UnsupportedMediaType Kind = "UNSUPPORTED_MEDIA_TYPE"
	PairNotSupported     Kind = "PAIR_NOT_SUPPORTED"
	PairNotEnabled       Kind = "PAIR_NOT_ENABLED"
	RateTypeMismatch     Kind = "RATE_TYPE_MISMATCH"
	InsufficientBalance  Kind = "INSUFFICIENT_BALANCE"
	UnknownBank          Kind = "UNKNOWN_BANK"
	UnknownBranch        Kind = "UNKNOWN_BRANCH"
	AccountNotResolved   Kind = "ACCOUNT_NOT_RESOLVED"
	AmountTooSmall       Kind = "AMOUNT_TOO_SMALL"
	RailNotConfigured    Kind = "RAIL_NOT_CONFIGURED" // a live operation whose provider is not configured
	RailRefused          Kind = "RAIL_REFUSED"        // the live provider refused the request for good: nothing was made
	RateLimited          Kind = "RATE_LIMITED"
	RequestTimeout       Kind = "REQUEST_TIMEOUT"
	Internal             Kind = "INTERNAL_ERROR"
	Unavailable          Kind = "UNAVAILABLE"
)

// Kinds of a GraphQL operation stopped by its limits: too costly to start,
// out of time, or an answer too large to send.
const (
	QueryTooComplex  Kind = "QUERY_TOO_COMPLEX"
	Timeout          Kind = "TIMEOUT"
	ResponseTooLarge Kind = "RESPONSE_TOO_LARGE"
)

var statusOf = map[Kind]int{
	BadRequest:           http.StatusBadRequest,
	Validation:           http.StatusBadRequest,
	Unauthorized:         http.StatusUnauthorized,
	Forbidden:            http.StatusForbidden,
	LiveModeOnly:         http.StatusForbidden,
	NotEnrolled:          http.StatusForbidden,
	NotFound:             http.StatusNotFound,
	MethodNotAllowed:     http.StatusMethodNotAllowed,
	DuplicateReference:   http.StatusConflict,
	RateExpired:          http.StatusConflict,
	RateUsed:             http.StatusConflict,
	IdempotencyKeyReused: http.StatusConflict,
	IdempotencyKeyInUse:  http.StatusConflict,
	PayloadTooLarge:      http.StatusRequestEntityTooLarge,
	UnsupportedMediaType: http.StatusUnsupportedMediaType,
	PairNotSupported:     http.StatusUnprocessableEntity,
	PairNotEnabled:       http.StatusUnprocessableEntity,
	RateTypeMismatch:     http.StatusUnprocessableEntity,
	InsufficientBalance:  http.StatusUnprocessableEntity,
	UnknownBank:          http.StatusUnprocessableEntity,
	UnknownBranch:        http.StatusUnprocessableEntity,
	AccountNotResolved:   http.StatusUnprocessableEntity,
	AmountTooSmall:       http.StatusUnprocessableEntity,
	RailNotConfigured:    http.StatusUnprocessableEntity,
	RailRefused:          http.StatusUnprocessableEntity,
	RateLimited:          http.StatusTooManyRequests,
	RequestTimeout:       http.StatusRequestTimeout,
	Internal:             http.StatusInternalServerError,
	Unavailable:          http.StatusServiceUnavailable,

	QueryTooComplex:  http.StatusBadRequest,
	Timeout:          http.StatusServiceUnavailable,
	ResponseTooLarge: http.StatusBadRequest,
}

// Status is the HTTP status of a kind (500 for an unknown kind).
func (k Kind) Status() int {
	if s, ok := statusOf[k]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// FieldError names one bad field or query parameter.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is an error of a known kind with a client-safe message.
type Error struct {
	Kind    Kind
	Message string
	Fields  []FieldError
	// Cause is logged, never shown to clients.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Kind, e.Message, e.Cause)
	}
	return fmt.Sprintf("%s: %s", e.Kind, e.Message)
}

func (e *Error) Unwrap() error { return e.Cause }

// New makes an error of a kind.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap makes an error of a kind that keeps its cause for the logs.
func Wrap(kind Kind, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Cause: cause}
}

// KindOf returns the kind of err: Internal for anything that is not an *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// As returns err as an *Error; anything unknown becomes an internal error
// whose message leaks nothing.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: Internal, Message: "internal error", Cause: err}
}

// Is reports whether err is of kind k.
func Is(err error, k Kind) bool { return KindOf(err) == k }

// Fields collects field errors so that a request reports every bad field at once.
type Fields struct {
	list []FieldError
}

// Add records one bad field.
func (f *Fields) Add(field, format string, args ...any) {
	f.list = append(f.list, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Len is the number of bad fields so far.
func (f *Fields) Len() int { return len(f.list) }

// List returns the bad fields so far.
func (f *Fields) List() []FieldError { return f.list }

// Merge adds g's entries to f, skipping fields f already names (one entry
// per field: a type error found first wins over a later semantic one).
func (f *Fields) Merge(g *Fields) {
	seen := make(map[string]bool, len(f.list)+len(g.list))
	for _, e := range f.list {
		seen[e.Field] = true
	}
	for _, e := range g.list {
		if !seen[e.Field] {
			f.list = append(f.list, e)
			seen[e.Field] = true
		}
	}
}

// With decides between f's field errors and a refusal that needs a look-up
// (an unknown bank): when fields are bad, the refusal's fields join them in
// one VALIDATION_ERROR, so that every bad field is named at once; else the
// refusal stands on its own (nil when there is none).
func (f *Fields) With(refusal *Error) error {
	if f.Len() > 0 {
		if refusal != nil {
			var g Fields
			for _, fe := range refusal.Fields {
				g.Add(fe.Field, "%s", fe.Message)
			}
			f.Merge(&g)
		}
		return f.Err()
	}
	if refusal != nil {
		return refusal
	}
	return nil
}

// Err returns a VALIDATION_ERROR naming every bad field, or nil when none.
func (f *Fields) Err() error {
	if len(f.list) == 0 {
		return nil
	}
	msg := "invalid request: " + f.list[0].Field + ": " + f.list[0].Message
	if len(f.list) > 1 {
		msg = fmt.Sprintf("invalid request: %d fields failed validation", len(f.list))
	}
	return &Error{Kind: Validation, Message: msg, Fields: append([]FieldError(nil), f.list...)}
}
