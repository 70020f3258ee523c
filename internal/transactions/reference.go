package transactions

import (
	"strings"

	"merchantpay/internal/validate"
)

// The prefixes of the service's own references, each followed by the
// transaction's UUID: the packages that write references use these, so
// that ServiceReference knows every one.
const (
	WithdrawalPrefix = "WTH-"
	DepositPrefix    = "DEP-" // a crypto-pay deposit's too
	SwapPrefix       = "SWP-"
)

// ServicePrefixes are the prefixes of the service's own references.
var ServicePrefixes = []string{WithdrawalPrefix, DepositPrefix, SwapPrefix}

// ServiceReference reports whether ref has the form of a service reference,
// in any case, and returns it as the service writes it: the prefix in upper
// case, the UUID in lower case. Otherwise it returns ref unchanged and false.
func ServiceReference(ref string) (string, bool) {
	if len(ref) != 4+36 {
		return ref, false
	}
	for _, p := range ServicePrefixes {
		if !strings.EqualFold(ref[:4], p) {
			continue
		}
		id := strings.ToLower(ref[4:]) // ref[4:] itself when already lower case
		if !validate.UUID(id) {
			return ref, false
		}
		if ref[:4] == p && id == ref[4:] {
			return ref, true // already canonical: the look-up's hot path allocates nothing
		}
		return p + id, true
	}
	return ref, false
}

// CheckMerchantReference returns why ref cannot be a merchant's reference
// for a transaction, or "". Besides the characters every reference is
// limited to, a merchant reference may not have the form of a service
// reference: a look-up by reference finds either kind, ignoring case, so
// the two must never name different transactions.
func CheckMerchantReference(ref string) string {
	if msg := validate.Reference(ref); msg != "" {
		return msg
	}
	if _, ok := ServiceReference(ref); ok {
		return NotServiceShaped
	}
	return ""
}

// NotServiceShaped says what a merchant reference shaped like a service
// reference breaks.
const NotServiceShaped = "must not have the form of the service's own references (" +
	WithdrawalPrefix + ", " + DepositPrefix + " or " + SwapPrefix + " followed by a UUID, in any case)"
