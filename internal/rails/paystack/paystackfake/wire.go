package paystackfake

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// writeOK answers in Paystack's success envelope.
func writeOK(w http.ResponseWriter, status int, message string, data any) {
	writeJSON(w, status, map[string]any{"status": true, "message": message, "data": data})
}

// writeError answers in Paystack's error shape.
func writeError(w http.ResponseWriter, status int, typ, code, message string) {
	writeJSON(w, status, map[string]any{"status": false, "message": message,
		"meta": map[string]any{"nextStep": "Check the request and try again"}, "type": typ, "code": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// form is a JSON request body read field by field: each accessor checks
// the field's JSON type and records what is wrong.
type form struct {
	m    map[string]json.RawMessage
	errs []string
}

// parseForm reads body as a JSON object holding only allowed fields.
func parseForm(body []byte, allowed ...string) (*form, string) {
	fm := &form{}
	if err := json.Unmarshal(body, &fm.m); err != nil || fm.m == nil {
		return nil, "The request body must be a JSON object"
	}
	var unknown []string
	for k := range fm.m {
		if !contains(allowed, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, "Unknown field(s): " + strings.Join(unknown, ", ")
	}
	return fm, ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// str reads a JSON string field.
func (fm *form) str(name string, required bool) string {
	raw, ok := fm.m[name]
	if !ok || string(raw) == "null" {
		if required {
			fm.errs = append(fm.errs, name+" is required")
		}
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		fm.errs = append(fm.errs, name+" must be a string")
		return ""
	}
	if required && s == "" {
		fm.errs = append(fm.errs, name+" is required")
	}
	return s
}

// integer reads a JSON integer field: no string, no fraction, no exponent.
func (fm *form) integer(name string) (int64, bool) {
	raw, ok := fm.m[name]
	if !ok || string(raw) == "null" {
		fm.errs = append(fm.errs, name+" is required")
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		fm.errs = append(fm.errs, name+" must be an integer (in subunits)")
		return 0, false
	}
	return n, true
}

// object checks that a present field is a JSON object.
func (fm *form) object(name string) {
	raw, ok := fm.m[name]
	if !ok {
		return
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		fm.errs = append(fm.errs, name+" must be an object")
	}
}

func (fm *form) bad(msg string) { fm.errs = append(fm.errs, msg) }

// failed answers 400 with every recorded problem, if any.
func (fm *form) failed(w http.ResponseWriter) bool {
	if len(fm.errs) == 0 {
		return false
	}
	writeError(w, http.StatusBadRequest, "validation_error", "invalid_params", strings.Join(fm.errs, "; "))
	return true
}
