package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"merchantpay/internal/apperr"
	"merchantpay/present/jsonx"
	"merchantpay/present/txview"
)

// Meta is the pagination block of list answers: next_cursor, passed back as
// cursor, gets the next page.
type Meta struct {
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

type okEnvelope struct {
	Status     bool   `json:"status"`
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	Data       any    `json:"data"`
	Meta       *Meta  `json:"meta,omitempty"`
}

type errEnvelope struct {
	Status     bool                `json:"status"`
	StatusCode int                 `json:"statusCode"`
	Message    string              `json:"message"`
	Code       apperr.Kind         `json:"code"`
	Errors     []apperr.FieldError `json:"errors"`
	Data       any                 `json:"data"`
}

// Result is a handler's successful answer.
type Result struct {
	Status  int
	Message string
	Data    any
	Meta    *Meta
}

func encode(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every value rendered here is built by this package.
		panic(fmt.Sprintf("rest: encoding answer: %v", err))
	}
	return buf.Bytes()
}

func renderOK(res Result) []byte {
	status := res.Status
	if status == 0 {
		status = http.StatusOK
	}
	if d, ok := res.Data.(jsonAppender); ok && res.Meta == nil {
		// okEnvelope's encoding, written directly (TestRenderOKAppender).
		b := make([]byte, 0, 1536)
		b = append(b, `{"status":true,"statusCode":`...)
		b = strconv.AppendInt(b, int64(status), 10)
		b = append(b, `,"message":`...)
		b = txview.AppendString(b, res.Message)
		b = append(b, `,"data":`...)
		b = d.AppendJSON(b)
		return append(b, "}\n"...)
	}
	return encode(okEnvelope{Status: true, StatusCode: status, Message: res.Message, Data: res.Data, Meta: res.Meta})
}

// A jsonAppender writes its own JSON, as encoding/json with HTML escaping
// off would (txview.Transaction).
type jsonAppender interface{ AppendJSON(b []byte) []byte }

// renderError renders e; internal errors carry only the request id.
func renderError(e *apperr.Error, requestID string) []byte {
	msg := e.Message
	if e.Kind == apperr.Internal {
		msg = "internal error; quote request id " + requestID + " to support"
	}
	fields := e.Fields
	if fields == nil {
		fields = []apperr.FieldError{}
	}
	return encode(errEnvelope{Status: false, StatusCode: e.Kind.Status(), Message: msg, Code: e.Kind, Errors: fields})
}

// Num renders a decimal as a JSON number, exactly (never through float64).
type Num = jsonx.Num

// NumPtr renders nil as null.
func NumPtr(d *decimal.Decimal) *Num { return jsonx.NumPtr(d) }

// Time renders t in UTC with milliseconds.
func Time(t time.Time) string { return jsonx.Time(t) }

// TimePtr renders nil as null.
func TimePtr(t *time.Time) *string { return jsonx.TimePtr(t) }
