// Package page is keyset pagination: newest first by (created_at, id), with
// opaque cursors, shared by REST lists and GraphQL connections.
package page

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"merchantpay/internal/apperr"
	"merchantpay/internal/validate"
)

// MaxLimit is the largest page.
const MaxLimit = 100

// DefaultLimit is the page size when none is asked.
const DefaultLimit = 20

// Cursor is the position after which a page starts.
type Cursor struct {
	Time time.Time
	ID   string
}

// Encode renders c opaquely.
func (c Cursor) Encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Time.UnixMilli(), 10) + "|" + c.ID))
}

// IDForm reports whether id has the form of the ids a list puts in its
// cursors. A cursor whose id has another form was not issued by the
// service, and is refused before it reaches a query.
type IDForm func(id string) bool

// UUID is the form of ids that are UUIDs as the service writes them
// (validate.UUID).
func UUID(id string) bool { return validate.UUID(id) }

// Prefixed is the form of ids made of prefix and a UUID ("we_" + UUID).
func Prefixed(prefix string) IDForm {
	return func(id string) bool {
		rest, ok := strings.CutPrefix(id, prefix)
		return ok && UUID(rest)
	}
}

// Serial is the form of ids that are positive integers, in decimal without
// leading zeros or sign.
func Serial(id string) bool {
	if len(id) == 0 || len(id) > 19 || id[0] == '0' {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return true
}

// Code is the form of ids that are codes such as a currency's: 1 to 16
// upper-case letters and digits.
func Code(id string) bool {
	if len(id) == 0 || len(id) > 16 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// Decode parses a cursor made by Encode for a list whose ids have the form
// idForm.
func Decode(s string, idForm IDForm) (Cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, false
	}
	ms, id, ok := strings.Cut(string(b), "|")
	if !ok || id == "" {
		return Cursor{}, false
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	// A cursor this service issued holds a time between 1970 and 9999 and
	// an id of valid text; anything else was tampered with (PostgreSQL
	// cannot even compare such a time).
	if err != nil || n < 0 || n > maxCursorMillis || !utf8.ValidString(id) || strings.IndexByte(id, 0) >= 0 || !idForm(id) {
		return Cursor{}, false
	}
	return Cursor{Time: time.UnixMilli(n).UTC(), ID: id}, true
}

// maxCursorMillis is 9999-12-31T23:59:59.999Z.
const maxCursorMillis = 253402300799999

// Params is a validated page request.
type Params struct {
	Limit int
	After *Cursor
}

// Parse validates a limit and cursor of a list whose ids have the form
// idForm; field names are the caller's (limit/cursor for REST, first/after
// for GraphQL).
func Parse(limit *int, cursor *string, limitField, cursorField string, idForm IDForm, f *apperr.Fields) Params {
	p := Params{Limit: DefaultLimit}
	if limit != nil {
		if *limit < 1 || *limit > MaxLimit {
			f.Add(limitField, "must be between 1 and %d", MaxLimit)
		} else {
			p.Limit = *limit
		}
	}
	if cursor != nil && *cursor != "" {
		c, ok := Decode(*cursor, idForm)
		if !ok {
			f.Add(cursorField, "is not a cursor this service issued")
		} else {
			p.After = &c
		}
	}
	return p
}

// Info tells whether more rows follow.
type Info struct {
	HasMore    bool
	NextCursor *string
	// StartCursor and EndCursor (the first and last row's, whether or not
	// more follow) are for GraphQL connections.
	StartCursor *string
	EndCursor   *string
}

// Cut trims rows fetched with limit+1 and describes the page.
func Cut[T any](rows []T, limit int, cursor func(T) Cursor) ([]T, Info) {
	var info Info
	if len(rows) > limit {
		rows = rows[:limit]
		info.HasMore = true
	}
	if len(rows) > 0 {
		first := cursor(rows[0]).Encode()
		last := cursor(rows[len(rows)-1]).Encode()
		info.StartCursor, info.EndCursor = &first, &last
		if info.HasMore {
			info.NextCursor = &last
		}
	}
	return rows, info
}
