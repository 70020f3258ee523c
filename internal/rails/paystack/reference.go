package paystack

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Paystack's rules for a transfer reference: lowercase letters, digits, '-'
// and '_', at least 16 and at most 50 characters.
const (
	minReferenceLen = 16
	maxReferenceLen = 50
)

// hashedPrefix starts every reference made by the second rule of
// ProviderReference; the first rule never yields it.
const hashedPrefix = "ref_"

// ProviderReference is the Paystack transfer reference of our payout
// reference. The mapping is deterministic, so a retry, a look-up or a
// process that restarted finds the same transfer:
//
//   - our reference in lower case, when that alone follows Paystack's rules
//     and does not start with "ref_": the service's "WTH-<uuid>" becomes
//     "wth-<uuid>" (40 characters), readable in Paystack's dashboard;
//   - otherwise "ref_", up to 13 characters of it (lower case, any other
//     character as '-'), '_' and the first 32 hex digits of its SHA-256:
//     between 37 and 50 characters.
//
// Two of our references that differ only in letter case share a Paystack
// reference; the service's references never do (their uuid is lower case).
func ProviderReference(ourRef string) string {
	lower := strings.ToLower(ourRef)
	if len(lower) >= minReferenceLen && len(lower) <= maxReferenceLen && validReferenceChars(lower) &&
		!strings.HasPrefix(lower, hashedPrefix) {
		return lower
	}
	var b strings.Builder
	b.WriteString(hashedPrefix)
	for _, r := range lower {
		if b.Len() >= len(hashedPrefix)+13 {
			break
		}
		if r > 0x7f || !validReferenceChar(byte(r)) {
			r = '-'
		}
		b.WriteRune(r)
	}
	sum := sha256.Sum256([]byte(ourRef))
	b.WriteByte('_')
	b.WriteString(hex.EncodeToString(sum[:16]))
	return b.String()
}

// ValidReference reports whether s follows Paystack's transfer-reference
// rules.
func ValidReference(s string) bool {
	return len(s) >= minReferenceLen && len(s) <= maxReferenceLen && validReferenceChars(s)
}

func validReferenceChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !validReferenceChar(s[i]) {
			return false
		}
	}
	return true
}

func validReferenceChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}
