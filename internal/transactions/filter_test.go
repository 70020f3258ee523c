package transactions

import (
	"strings"
	"testing"

	"merchantpay/internal/apperr"
)

// A search is limited to 200 characters, not bytes: 200 two-byte
// characters are taken, 201 are not.
func TestSearchLimitCountsCharacters(t *testing.T) {
	for n, ok := range map[int]bool{200: true, 201: false} {
		s := strings.Repeat("é", n)
		var errs apperr.Fields
		Filter{Search: &s}.Validate(FilterFields{Search: "search"}, &errs)
		if (errs.Len() == 0) != ok {
			t.Errorf("a search of %d characters (%d bytes): %v, want taken %v", n, len(s), errs.List(), ok)
		}
	}
}
