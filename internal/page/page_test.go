package page

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Every cursor the service issues decodes with its list's id form, and an
// id of another form does not.
func TestDecodeChecksTheIDForm(t *testing.T) {
	at := time.UnixMilli(1700000000000).UTC()
	id := uuid.NewString()
	v7, _ := uuid.NewV7()
	for _, tc := range []struct {
		form   IDForm
		ok, no []string
	}{
		{UUID, []string{id, v7.String()}, []string{"", "x' OR 1=1--", "we_" + id, id[:35], id + "0", "0190B5A4-7C1E-7A00-8000-000000000000", "0190b5a4x7c1e-7a00-8000-000000000000"}},
		{Prefixed("we_"), []string{"we_" + id}, []string{id, "dlv_" + id, "we_", "we_x' OR 1=1--"}},
		{Serial, []string{"1", strconv.FormatInt(1<<62, 10)}, []string{"", "0", "01", "-1", "+1", "1 OR 1=1", "12345678901234567890"}},
		{Code, []string{"NGN", "USDT"}, []string{"", "ngn", "NG N", "ABCDEFGHIJKLMNOPQ"}},
	} {
		for _, s := range tc.ok {
			c, ok := Decode(Cursor{Time: at, ID: s}.Encode(), tc.form)
			if !ok || c.ID != s || !c.Time.Equal(at) {
				t.Errorf("%q: %v %v", s, c, ok)
			}
		}
		for _, s := range tc.no {
			if _, ok := Decode(Cursor{Time: at, ID: s}.Encode(), tc.form); ok {
				t.Errorf("%q was taken", s)
			}
		}
	}
}
